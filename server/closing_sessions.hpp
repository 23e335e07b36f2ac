#pragma once
// Sessions the server ended, for a few seconds after: a packet of one is answered with its BYE again
// (QUIC's closing state, RFC 9000 section 10.2.1). A BYE is sent three times, at once, into a path that
// may be full: the bed's overload case lost all three to 4 of 170 peers ended "path too slow", which
// then waited out their silence, joined again, and one of them stalled its player for a second.
#include <chrono>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "net/address.hpp"

namespace ncast::server {

class ClosingSessions {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;

  // `bye`: a sealed BYE of session `id` for `peer`, kept until `now` + kLinger.
  void add(std::uint64_t id, const net::Address& peer, std::span<const std::uint8_t> bye, TimePoint now);
  // A packet of session `id` came from `from`: the BYE to send back, or nothing (no such session, or
  // another address, or answered a moment ago).
  std::span<const std::uint8_t> answer(std::uint64_t id, const net::Address& from, TimePoint now);
  void expire(TimePoint now);
  std::size_t size() const { return entries_.size(); }

  // Past a peer's silence before it joins again (ncast-peer --stall-timeout 2 s, the idle timeout's
  // quarter between its ACKs otherwise).
  static constexpr auto kLinger = std::chrono::seconds(5);
  // A peer whose ACKs cross the BYEs in flight gets one answer per this, not one per ACK.
  static constexpr auto kGap = std::chrono::milliseconds(50);

 private:
  struct Entry {
    net::Address peer;
    std::vector<std::uint8_t> bye;
    TimePoint until{}, answered{};
  };
  std::unordered_map<std::uint64_t, Entry> entries_;
};

}  // namespace ncast::server
