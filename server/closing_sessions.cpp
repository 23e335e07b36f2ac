#include "server/closing_sessions.hpp"

namespace ncast::server {

void ClosingSessions::add(std::uint64_t id, const net::Address& peer, std::span<const std::uint8_t> bye,
                          TimePoint now) {
  entries_[id] = {peer, {bye.begin(), bye.end()}, now + kLinger, now};
}

std::span<const std::uint8_t> ClosingSessions::answer(std::uint64_t id, const net::Address& from, TimePoint now) {
  const auto it = entries_.find(id);
  if (it == entries_.end() || it->second.peer != from || now >= it->second.until || now - it->second.answered < kGap)
    return {};
  it->second.answered = now;
  return it->second.bye;
}

void ClosingSessions::expire(TimePoint now) {
  std::erase_if(entries_, [now](const auto& e) { return now >= e.second.until; });
}

}  // namespace ncast::server
