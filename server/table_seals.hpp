#pragma once
// The origin's signed material a session sends with a stream (docs/protocol.md section 2.11): the
// stream certificate in its MANIFEST and a seal closing each SEGMENTS batch. A server signs the streams
// it originates itself (OriginSeals); a relay forwards what its origin signed, so it can end a batch
// only where it holds one of the origin's seals.
#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "protocol/crypto.hpp"
#include "protocol/segment_seal.hpp"
#include "server/symbol_source.hpp"

namespace ncast::server {

class TableSeals {
 public:
  virtual ~TableSeals() = default;
  // The origin's key and its signature of the stream's identity.
  virtual std::pair<proto::PublicKey, proto::Signature> certificate() const = 0;
  // The furthest end in (from, limit] at which a batch starting at `from` can be sealed; `from` when none.
  virtual std::uint32_t sealed_end(std::uint32_t from, std::uint32_t limit) const = 0;
  // The seal of the table's first `end` descriptors (final: and no more); nullopt when not held.
  virtual std::optional<proto::Signature> seal(std::uint32_t end, bool final) = 0;
};

// This server is the origin: it signs with its own identity, each seal once (a session's batches end
// where others' did, so most are shared).
class OriginSeals final : public TableSeals {
 public:
  // Both outlive this.
  OriginSeals(const proto::Ed25519Identity& identity, const SymbolSource& source);

  std::pair<proto::PublicKey, proto::Signature> certificate() const override {
    return {identity_.public_key(), certificate_};
  }
  std::uint32_t sealed_end(std::uint32_t from, std::uint32_t limit) const override;
  std::optional<proto::Signature> seal(std::uint32_t end, bool final) override;

 private:
  const proto::Ed25519Identity& identity_;
  const SymbolSource& source_;
  proto::Signature certificate_{};
  std::vector<proto::Sha256Digest> chain_;  // chain(0 .. k), extended as batches reach further
  std::map<std::pair<std::uint32_t, bool>, proto::Signature> seals_;
};

}  // namespace ncast::server
