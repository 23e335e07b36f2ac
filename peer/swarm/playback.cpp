#include "peer/swarm/playback.hpp"

#include <algorithm>

namespace ncast::swarm {

void Playback::segment_written(std::size_t bytes, Clock::time_point at, Clock::time_point available) {
  const auto play_time = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(bitrate_ > 0 ? 8.0 * static_cast<double>(bytes) / bitrate_ : 0.0));
  if (segments_++ == 0) {
    due_ = at + std::chrono::duration_cast<Clock::duration>(startup_) + play_time;
    return;
  }
  if (bitrate_ > 0) {
    const double slack = std::chrono::duration<double>(std::max(due_, available) - at).count();
    least_slack_s_ = std::min(least_slack_s_.value_or(slack), slack);
  }
  if (bitrate_ > 0 && at > due_) {
    const auto awaited = std::max(due_, available);
    if (at > awaited) {
      ++late_;
      stall_s_ += std::chrono::duration<double>(at - awaited).count();
      if (!first_late_at_) first_late_at_ = at;
    }
    due_ = at;  // the player waited for it and plays it now
  }
  due_ += play_time;
}

}  // namespace ncast::swarm
