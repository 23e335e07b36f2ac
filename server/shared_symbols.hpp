#pragma once
// Coded symbols sealed once for every session of a stream (docs/protocol.md section 2.8): the shared
// parts of CODED packets under one stream key, with their SHA-256 that each session's authenticator
// covers. Symbols that repeat (an encoder's systematic and seeded ones: the same (segment, j) for every
// session) are sealed once and kept, the oldest dropped past a byte budget; a relay's recoded symbols are
// fresh for each packet and sealed each time. An evicted symbol is sealed again into the same octets:
// same coded header, so same nonce, and same plaintext.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <span>
#include <unordered_map>
#include <vector>

#include "protocol/coded_seal.hpp"
#include "server/symbol_source.hpp"

namespace ncast::server {

struct SharedPart {
  std::vector<std::uint8_t> bytes;  // coded header, ciphertext, stream tag
  proto::Sha256Digest digest{};
};

struct SharedStats {
  std::uint64_t sealed = 0, hits = 0;
};

class SharedSymbols {
 public:
  SharedSymbols(SymbolSource& source, proto::Suite suite, std::size_t budget_bytes);

  const proto::StreamKey& key() const { return key_; }
  // The shared part of source symbol i, or of coded symbol j, of segment; null when the source cannot
  // make it. Valid until the next call.
  const SharedPart* systematic(std::uint32_t segment, std::uint32_t i);
  const SharedPart* coded(std::uint32_t segment, std::uint32_t j);
  const SharedStats& stats() const { return stats_; }

 private:
  template <typename Write>
  const SharedPart* get(std::uint64_t cache_key, bool repeats, Write&& write);
  bool seal(SharedPart& part, auto&& write);

  SymbolSource& source_;
  proto::StreamKey key_;
  proto::Aead aead_;
  std::size_t budget_, bytes_ = 0;
  std::unordered_map<std::uint64_t, SharedPart> parts_;
  std::deque<std::uint64_t> order_;  // oldest first
  SharedPart fresh_;                 // the last symbol that does not repeat
  SharedStats stats_;
};

}  // namespace ncast::server
