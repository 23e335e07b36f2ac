#pragma once
// The running hash of a peer's segment table and the origin's seals over it (docs/protocol.md section
// 2.11): whether a SEGMENTS batch is what the origin signed, and, for a relay, the origin's certificate
// and seals kept to forward unchanged.
#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "protocol/crypto.hpp"
#include "protocol/packets.hpp"

namespace ncast::peer {

class SealedTable {
 public:
  // The first MANIFEST adopted: the stream whose chain this is, and the certificate a relay forwards.
  void start(const proto::ManifestBody& manifest);
  // Whether origin sealed body: the chain from chain(first) over its descriptors, and its final flag.
  // first must be at most known().
  bool verifies(const proto::SegmentsBody& body, const proto::PublicKey& origin) const;
  // Descriptors the chain covers; the receiver appends each one it accepts.
  std::uint32_t known() const { return static_cast<std::uint32_t>(chain_.size() - 1); }
  void append(const proto::SegmentDescriptor& descriptor);
  // A verified batch's seal, kept when its origin is the certificate's (those are the ones a relay forwards).
  void keep(const proto::SegmentsBody& body, const proto::PublicKey& origin);

  const std::pair<proto::PublicKey, proto::Signature>& certificate() const { return certificate_; }
  // The furthest kept seal's end in (from, limit]; from when none.
  std::uint32_t sealed_end(std::uint32_t from, std::uint32_t limit) const;
  std::optional<proto::Signature> seal(std::uint32_t end, bool final) const;

 private:
  std::vector<proto::Sha256Digest> chain_{proto::Sha256Digest{}};
  std::pair<proto::PublicKey, proto::Signature> certificate_{};
  std::map<std::pair<std::uint32_t, bool>, proto::Signature> seals_;
};

}  // namespace ncast::peer
