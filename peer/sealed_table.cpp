#include "peer/sealed_table.hpp"

#include <iterator>

#include "protocol/segment_seal.hpp"

namespace ncast::peer {

void SealedTable::start(const proto::ManifestBody& manifest) {
  chain_.assign(1, proto::chain_start(proto::stream_identity(manifest)));
  certificate_ = {manifest.origin, manifest.certificate};
  seals_.clear();
}

bool SealedTable::verifies(const proto::SegmentsBody& body, const proto::PublicKey& origin) const {
  if (body.first >= chain_.size()) return false;
  proto::Sha256Digest chain = chain_[body.first];
  for (std::size_t i = 0; i < body.descriptors.size(); ++i)
    chain = proto::chain_next(chain, static_cast<std::uint32_t>(body.first + i), body.descriptors[i]);
  const auto end = static_cast<std::uint32_t>(body.first + body.descriptors.size());
  const bool final = (body.stream_flags & proto::stream_flags::final) != 0;
  return proto::seal_verifies(origin, end, final, chain, body.seal);
}

void SealedTable::append(const proto::SegmentDescriptor& descriptor) {
  chain_.push_back(proto::chain_next(chain_.back(), known(), descriptor));
}

void SealedTable::keep(const proto::SegmentsBody& body, const proto::PublicKey& origin) {
  if (origin != certificate_.first) return;
  const auto end = static_cast<std::uint32_t>(body.first + body.descriptors.size());
  seals_.insert_or_assign({end, (body.stream_flags & proto::stream_flags::final) != 0}, body.seal);
}

std::uint32_t SealedTable::sealed_end(std::uint32_t from, std::uint32_t limit) const {
  const auto after = seals_.upper_bound({limit, true});
  if (after == seals_.begin()) return from;
  const std::uint32_t end = std::prev(after)->first.first;
  return end > from ? end : from;
}

std::optional<proto::Signature> SealedTable::seal(std::uint32_t end, bool final) const {
  const auto it = seals_.find({end, final});
  if (it == seals_.end()) return std::nullopt;
  return it->second;
}

}  // namespace ncast::peer
