#pragma once
// A player consuming a stream at its bitrate, fed by segments as they are written in order: playback
// starts a startup delay after the first segment; each segment is due when the one before it has been
// played. A segment written after it was due is late: the player stalls (rebuffers) until it comes and
// then plays on from there, so one slow segment is one stall, not a cascade of late ones. Only a wait
// for a segment the server already had counts: a live segment made after it was due is late from when
// it was made (its descriptor arrived), not from when it was due.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>

namespace ncast::swarm {

class Playback {
 public:
  using Clock = std::chrono::steady_clock;

  // bitrate in bit/s (0: unknown, nothing is ever late); startup: the buffer before playback starts.
  Playback(double bitrate, std::chrono::duration<double> startup) : bitrate_(bitrate), startup_(startup) {}

  // available: when the server had the segment (its descriptor arrived).
  void segment_written(std::size_t bytes, Clock::time_point at, Clock::time_point available = {});

  std::uint64_t segments() const { return segments_; }
  std::uint64_t late() const { return late_; }
  double stall_seconds() const { return stall_s_; }
  // When the first late segment was written: where in a run the player first stalled.
  std::optional<Clock::time_point> first_late_at() const { return first_late_at_; }
  // The least time a segment after the first was written before it was due (negative: the longest a
  // late one kept the player waiting); how close a player that never stalled came to it. None before
  // the second segment.
  std::optional<double> least_slack_s() const { return least_slack_s_; }

 private:
  double bitrate_;
  std::chrono::duration<double> startup_;
  std::uint64_t segments_ = 0, late_ = 0;
  double stall_s_ = 0;
  std::optional<Clock::time_point> first_late_at_;
  std::optional<double> least_slack_s_;
  Clock::time_point due_{};  // when the next segment must be there
};

}  // namespace ncast::swarm
