#pragma once
// The grid that a server's wake-ups are rounded up to (docs/streaming.md, "Pacing"): the sessions due
// within one period share a timer expiry and a sendmmsg. --pacing-tick-us sets the finest period. From
// a grid that ticks (kMinTickPeriod or coarser) the period grows, up to kMaxPacingGrid and in whole
// multiples of the finest, while that changes nothing that a peer or a path sees: no session that took
// a turn lately sends its bursts more often than once a period (so none sends a larger burst: its bucket
// fills by at most a burst between grid points), none has a congested path (Session::coarsest_grid), and
// a period's datagrams stay within kGridDatagrams. A server of a few hundred realtime peers then wakes
// every few milliseconds rather than every one.
#include <chrono>
#include <cstdint>

namespace ncast::server {

// A grid this coarse or coarser ticks periodically while wake-ups are near; a finer one is per-session
// timing, one expiry at a time, and is kept as it is.
inline constexpr std::chrono::microseconds kMinTickPeriod{250};
// The coarsest period: a session's bucket holds this long's worth of its rate (Session::bucket_size), so
// no coarser grid costs a session rate.
inline constexpr std::chrono::milliseconds kMaxPacingGrid{4};
// The most datagrams a period may carry for the grid to grow: a share of a NIC's transmit queue (1,000
// packets by default) that one wake-up's sendmmsg leaves room for.
inline constexpr std::uint64_t kGridDatagrams = 256;

class PacingGrid {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;

  PacingGrid(TimePoint origin, std::chrono::nanoseconds finest);

  // The first grid point at or after `at`.
  TimePoint round_up(TimePoint at) const;
  std::chrono::nanoseconds period() const { return period_; }
  bool ticks() const { return period_ >= kMinTickPeriod; }

  // A session that tolerates a grid no coarser than `interval` (Session::coarsest_grid) took a turn: the
  // grid is made that fine at once if it is coarser. Returns whether the period changed.
  bool note_interval(std::chrono::nanoseconds interval);
  // The coarsest period that the intervals noted and the datagrams sent (a running total) since the
  // last call allow. Returns whether the period changed.
  bool adjust(TimePoint now, std::uint64_t datagrams_sent);

 private:
  // The coarsest whole multiple of the finest period within `bound`, at least the finest.
  std::chrono::nanoseconds multiple_within(std::chrono::nanoseconds bound) const;

  TimePoint origin_;
  std::chrono::nanoseconds finest_, period_;
  std::chrono::nanoseconds shortest_interval_ = std::chrono::nanoseconds::max();
  TimePoint adjusted_at_;
  std::uint64_t sent_at_adjust_ = 0;
};

}  // namespace ncast::server
