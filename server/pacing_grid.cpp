#include "server/pacing_grid.hpp"

#include <algorithm>

namespace ncast::server {

PacingGrid::PacingGrid(TimePoint origin, std::chrono::nanoseconds finest)
    : origin_(origin), finest_(std::max(finest, std::chrono::nanoseconds(1))), period_(finest_), adjusted_at_(origin) {}

PacingGrid::TimePoint PacingGrid::round_up(TimePoint at) const {
  const auto since = at - origin_;
  if (since <= TimePoint::duration::zero()) return at;
  const auto points = (since + period_ - TimePoint::duration(1)) / period_;
  return origin_ + points * period_;
}

std::chrono::nanoseconds PacingGrid::multiple_within(std::chrono::nanoseconds bound) const {
  return std::max<std::chrono::nanoseconds::rep>(1, bound / finest_) * finest_;
}

bool PacingGrid::note_interval(std::chrono::nanoseconds interval) {
  shortest_interval_ = std::min(shortest_interval_, interval);
  if (interval >= period_) return false;
  const auto finer = multiple_within(interval);
  if (finer == period_) return false;
  period_ = finer;
  return true;
}

bool PacingGrid::adjust(TimePoint now, std::uint64_t datagrams_sent) {
  const auto elapsed = std::chrono::duration_cast<std::chrono::nanoseconds>(now - adjusted_at_);
  const std::uint64_t sent = datagrams_sent - sent_at_adjust_;
  const auto shortest = shortest_interval_;
  adjusted_at_ = now;
  sent_at_adjust_ = datagrams_sent;
  shortest_interval_ = std::chrono::nanoseconds::max();
  if (finest_ < kMinTickPeriod || elapsed <= std::chrono::nanoseconds::zero()) return false;
  auto bound = std::min<std::chrono::nanoseconds>(shortest, kMaxPacingGrid);
  // The period within which kGridDatagrams left at the rate of the last interval.
  if (sent > 0)
    bound = std::min(bound, std::chrono::nanoseconds(static_cast<std::chrono::nanoseconds::rep>(
                                static_cast<double>(elapsed.count()) * kGridDatagrams / static_cast<double>(sent))));
  const auto period = multiple_within(bound);
  if (period == period_) return false;
  period_ = period;
  return true;
}

}  // namespace ncast::server
