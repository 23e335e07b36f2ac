#include "peer/origin_trust.hpp"

#include <algorithm>

namespace ncast::peer {

OriginTrust::Verdict OriginTrust::admit(const proto::PublicKey& identity, const proto::PublicKey& origin) {
  if (pinned_) {
    if (origin == *pinned_) return {Standing::trusted, {}};
    return {Standing::refused, "origin key mismatch: expected " + proto::to_hex(*pinned_) + " (--origin-key), got " +
                                   proto::to_hex(origin)};
  }
  if (identity == origin) {
    if (!trusts(origin)) learned_.push_back(origin);
    return {Standing::trusted, {}};
  }
  return {trusts(origin) ? Standing::trusted : Standing::waiting, {}};
}

bool OriginTrust::trusts(const proto::PublicKey& origin) const {
  if (pinned_) return origin == *pinned_;
  return std::find(learned_.begin(), learned_.end(), origin) != learned_.end();
}

}  // namespace ncast::peer
