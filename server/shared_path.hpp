#pragma once
// Paced sessions that share a path and cannot all be carried by it, ended together: RFC 8699's coupled
// congestion control, for flows that cannot slow down. The paced sessions of one peer address share at
// least the path to it (a host, or the NAT in front of a network's viewers). When most of those judged
// are short at once and the last window carried less than nine tenths of what they need, the path is
// full, not lossy: random loss is made up for and leaves each session carrying its stream. Each
// session's own breaker would then end a share of them at random, a second or two later, and end too
// many or too few while the survivors' players stall. Instead, what the path carried for all of them
// says how many streams it takes: those whose players are furthest from a stall keep theirs within four
// fifths of it, a fifth left to the elastic flows beside them, and the others end at once with the
// breaker's BYE. Not the oldest: they got their first segment before the path filled, their players
// started, and then starved longest (kept, one of them stalled in 4 of 14 of the bed's overload runs).
#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

namespace ncast::server {

struct PathMember {
  std::uint32_t slot = 0;
  std::chrono::steady_clock::time_point joined{};
  bool judged = false;     // its breaker has judged an interval
  bool short_now = false;  // and found the path short lately (CircuitBreaker::congested)
  double carried = 0;      // octets per second the path carried of its sending, over the last window
  double needed = 0;       // octets per second its stream needs
  // Seconds its peer's player is from a stall (Session::played_ahead); none before its first segment.
  std::optional<double> ahead;
};

// The slots of the members the path cannot carry beside those further from a stall: none unless at least
// two members, and most of those judged, are short and the window carried less than 0.9 of what all
// need; never the first kept (alone, its own breaker judges it).
std::vector<std::uint32_t> beyond_shared_path(std::vector<PathMember> members);

}  // namespace ncast::server
