// How far a session's peer is from a stall, as its ACKs tell the server: the seconds of the stream it
// has decoded beyond what a player started at its first decoded segment has played (a full shared path
// keeps the sessions furthest ahead).
#include "server/session.hpp"

#include <algorithm>

namespace ncast::server {

void Session::count_decoded(std::uint32_t next_needed, TimePoint now) {
  const double bitrate = static_cast<double>(source_.info().bitrate);
  if (next_needed <= peer_next_needed_ || bitrate <= 0) return;
  if (!first_decoded_at_) first_decoded_at_ = now;
  // Segments a live window already dropped have no descriptor left: the peer has them, their length
  // is not counted.
  const std::uint32_t end = std::min(next_needed, source_.segment_count());
  for (std::uint32_t s = std::max(peer_next_needed_, source_.first_segment()); s < end; ++s)
    decoded_seconds_ += 8.0 * static_cast<double>(source_.descriptor(s).size) / bitrate;
}

std::optional<double> Session::played_ahead(TimePoint now) const {
  if (!first_decoded_at_) return std::nullopt;
  return decoded_seconds_ - std::chrono::duration<double>(now - *first_decoded_at_).count();
}

}  // namespace ncast::server
