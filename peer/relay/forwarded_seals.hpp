#pragma once
// A relay's part in the origin's signatures: it forwards the certificate and the seals its peer took
// (verified) from upstream, unchanged, and ends each batch where it holds one of those seals.
#include "peer/stream_receiver.hpp"
#include "server/table_seals.hpp"

namespace ncast::peer {

class ForwardedSeals final : public server::TableSeals {
 public:
  explicit ForwardedSeals(const StreamReceiver& receiver) : receiver_(receiver) {}

  std::pair<proto::PublicKey, proto::Signature> certificate() const override { return receiver_.table().certificate(); }
  std::uint32_t sealed_end(std::uint32_t from, std::uint32_t limit) const override {
    return receiver_.table().sealed_end(from, limit);
  }
  std::optional<proto::Signature> seal(std::uint32_t end, bool final) override {
    return receiver_.table().seal(end, final);
  }

 private:
  const StreamReceiver& receiver_;
};

}  // namespace ncast::peer
