#pragma once
// Coded symbols sealed once for every session of a stream (docs/protocol.md section 2.8): the shared
// parts of CODED packets under one stream key, with their SHA-256 that each session's authenticator
// covers. Symbols that repeat (an encoder's systematic and seeded ones: the same (segment, j) for every
// session) are sealed once and kept, the oldest dropped past a byte budget; a relay's recoded symbols are
// fresh for each packet and sealed each time. An evicted symbol is sealed again into the same octets:
// same coded header, so same nonce, and same plaintext. Parts are shared with the packets that carry them
// in place (a socket's queue holds them until sent), so an evicted part lives until its last send.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
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
  // make it. Never changed once returned.
  std::shared_ptr<const SharedPart> systematic(std::uint32_t segment, std::uint32_t i);
  std::shared_ptr<const SharedPart> coded(std::uint32_t segment, std::uint32_t j);
  const SharedStats& stats() const { return stats_; }

 private:
  // Where a kept part is: its segment, and its index among the segment's systematic or coded symbols.
  struct Place {
    std::uint32_t segment;
    bool systematic;
    std::uint32_t index;
  };
  // A segment's kept parts by index: a lookup is an index, not a hash of every symbol.
  struct SegmentParts {
    std::vector<std::shared_ptr<SharedPart>> systematic, coded;
    std::size_t kept = 0;
  };
  template <typename Write>
  std::shared_ptr<const SharedPart> get(const Place& at, bool repeats, Write&& write);
  // The entry for a part, made empty when there is none; valid until the next eviction.
  std::shared_ptr<SharedPart>& entry(const Place& at);
  void evict_oldest();
  bool seal(SharedPart& part, auto&& write);

  SymbolSource& source_;
  proto::StreamKey key_;
  proto::Aead aead_;
  std::size_t budget_, bytes_ = 0;
  std::unordered_map<std::uint32_t, SegmentParts> segments_;
  SegmentParts* last_ = nullptr;  // the segment of the latest lookup (sessions ask for one in a row)
  std::uint32_t last_segment_ = 0;
  std::deque<Place> order_;  // oldest first
  // The last symbol that does not repeat: sealed over again once no packet holds it, so that a relay's
  // recoded symbols cost no allocation while the socket keeps up.
  std::shared_ptr<SharedPart> fresh_;
  SharedStats stats_;
};

}  // namespace ncast::server
