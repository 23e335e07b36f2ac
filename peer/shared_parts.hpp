#pragma once
// CODED shared parts remembered for the peers of one thread. Since protocol version 2 a stream's coded
// symbol is sealed once and the same shared part reaches every peer of the stream: each peer checks its
// own session's authenticator over that part's SHA-256 (protocol/coded_seal.hpp), then opens the part
// under the stream key. Simulated peers of one swarm thread hash each shared part once instead of once
// per peer, and open it once per stream key: what the open gave is copied into the next peer's datagram
// instead of decrypted again. Both are reused only for octets equal, all of them, to those they were
// computed over (and an open only under the same suite and key octets): the slot is found by a few of
// the octets (the coded header, distinct per sealed symbol, and the stream tag), never trusted on them.
// Each peer still computes and compares its own authenticator. Not thread-safe: one per thread.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "protocol/crypto.hpp"

namespace ncast::peer {

class SharedParts {
 public:
  // slots: shared parts remembered at once (rounded up to a power of two); a part evicts the slot's
  // previous one.
  explicit SharedParts(std::size_t slots = 1024);

  proto::Sha256Digest digest(std::span<const std::uint8_t> shared);
  // As proto::open_shared(stream, shared), `key` the stream key's octets (stream's context). Called
  // next after digest() of the same octets, unchanged (a link checks a datagram's authenticator, then
  // opens it), it does not compare them with the slot's again.
  std::optional<std::span<const std::uint8_t>> open(std::span<std::uint8_t> shared, std::span<const std::uint8_t> key,
                                                    proto::Aead& stream);

  std::uint64_t hits() const { return hits_; }
  std::uint64_t misses() const { return misses_; }
  std::uint64_t opens_reused() const { return opens_reused_; }

 private:
  struct Slot {
    std::vector<std::uint8_t> octets;
    proto::Sha256Digest digest{};
    // What opening octets gave (the coded body) under this suite and key; empty: not opened yet.
    std::vector<std::uint8_t> opened, opened_key;
    proto::Suite opened_suite{};
  };
  std::size_t slot_of(std::span<const std::uint8_t> shared) const;
  bool holds(const Slot& s, std::span<const std::uint8_t> shared) const;

  std::vector<Slot> slots_;
  // What digest() last found in (or put into) its slot; the next open() takes it and clears it.
  std::span<const std::uint8_t> digested_;
  std::uint64_t hits_ = 0, misses_ = 0, opens_reused_ = 0;
};

}  // namespace ncast::peer
