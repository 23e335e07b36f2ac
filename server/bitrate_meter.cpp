#include "server/bitrate_meter.hpp"

namespace ncast::server {

namespace {
constexpr auto kMerge = std::chrono::milliseconds(20);
}

void BitrateMeter::add(Clock::time_point at, std::uint64_t bytes) {
  if (!arrivals_.empty() && at - arrivals_.back().at < kMerge && arrivals_.size() > 1) {
    arrivals_.back().bytes += bytes;
  } else {
    arrivals_.push_back({at, bytes});
  }
  bytes_ += bytes;
  while (arrivals_.size() > 2 && at - arrivals_[1].at > window_) {
    bytes_ -= arrivals_.front().bytes;
    arrivals_.pop_front();
  }
}

std::uint64_t BitrateMeter::bitrate() const {
  if (arrivals_.size() < 2) return 0;
  const auto span = arrivals_.back().at - arrivals_.front().at;
  if (span < min_span_) return 0;
  // The first arrival's octets came before the span began.
  const double bits = 8.0 * static_cast<double>(bytes_ - arrivals_.front().bytes);
  return static_cast<std::uint64_t>(bits / std::chrono::duration<double>(span).count());
}

}  // namespace ncast::server
