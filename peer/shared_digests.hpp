#pragma once
// The SHA-256 of CODED shared parts, remembered for the peers of one thread. Since protocol version 2
// a stream's coded symbol is sealed once and the same shared part reaches every peer of the stream, and
// each peer checks its own session's authenticator over that part's SHA-256 (protocol/coded_seal.hpp):
// simulated peers of one swarm thread hash each shared part once instead of once per peer. A digest is
// reused only for octets equal, all of them, to those it was computed over: the slot is found by a few
// of the octets (the coded header, distinct per sealed symbol, and the stream tag), never trusted on
// them. Each peer still computes and compares its own authenticator. Not thread-safe: one per thread.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "protocol/crypto.hpp"

namespace ncast::peer {

class SharedDigests {
 public:
  // slots: shared parts remembered at once (rounded up to a power of two); a part evicts the slot's
  // previous one.
  explicit SharedDigests(std::size_t slots = 1024);

  proto::Sha256Digest digest(std::span<const std::uint8_t> shared);
  std::uint64_t hits() const { return hits_; }
  std::uint64_t misses() const { return misses_; }

 private:
  struct Slot {
    std::vector<std::uint8_t> octets;
    proto::Sha256Digest digest{};
  };
  std::size_t slot_of(std::span<const std::uint8_t> shared) const;

  std::vector<Slot> slots_;
  std::uint64_t hits_ = 0, misses_ = 0;
};

}  // namespace ncast::peer
