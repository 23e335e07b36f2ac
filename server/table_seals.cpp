#include "server/table_seals.hpp"

#include <algorithm>

namespace ncast::server {
namespace {

proto::StreamIdentity identity_of(const StreamInfo& info) {
  return {info.stream_id, info.name, info.n, info.symbol_size, info.live};
}

}  // namespace

OriginSeals::OriginSeals(const proto::Ed25519Identity& identity, const SymbolSource& source)
    : identity_(identity), source_(source), certificate_(proto::certify(identity, identity_of(source.info()))) {
  chain_.push_back(proto::chain_start(identity_of(source.info())));
}

std::uint32_t OriginSeals::sealed_end(std::uint32_t from, std::uint32_t limit) const {
  return std::max(from, std::min(limit, source_.segment_count()));
}

std::optional<proto::Signature> OriginSeals::seal(std::uint32_t end, bool final) {
  if (end > source_.segment_count() || (final && (!source_.final() || end != source_.segment_count())))
    return std::nullopt;
  const auto key = std::make_pair(end, final);
  if (const auto it = seals_.find(key); it != seals_.end()) return it->second;
  while (chain_.size() <= end) {
    const auto i = static_cast<std::uint32_t>(chain_.size() - 1);
    chain_.push_back(proto::chain_next(chain_.back(), i, source_.descriptor(i)));
  }
  return seals_.emplace(key, proto::seal_table(identity_, end, final, chain_[end])).first->second;
}

}  // namespace ncast::server
