// rs::Stripe: shards that do not overlap, each 64-byte aligned, and for whole-page lengths each at its own
// offset in its page, so that a kernel stepping through them all does not fill one L1 set.
#include "coding/rs/stripe.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <vector>

#include "coding/rs/codec.hpp"

namespace ncast::rs {
namespace {

TEST(RsStripe, ShardsOfWholePagesStartAtDifferentOffsetsInTheirPages) {
  const Codec codec(32, 8, {.backend = Backend::cpu});
  for (std::size_t len : {std::size_t{4096}, std::size_t{64} << 10, std::size_t{1} << 20}) {
    const Stripe stripe(codec, len);
    std::set<std::uintptr_t> offsets;
    for (std::size_t i = 0; i < stripe.shard_count(); ++i) {
      const auto at = reinterpret_cast<std::uintptr_t>(stripe.shard(i));
      EXPECT_EQ(at % kHostAlignment, 0u) << "shard " << i << " of " << len;
      offsets.insert(at % 4096);
      if (i == 0) continue;
      const auto before = reinterpret_cast<std::uintptr_t>(stripe.shard(i - 1));
      EXPECT_GE(at - before, len) << "shard " << i << " of " << len << " overlaps the one before";
      // Neighbours a line or two apart in the page alias each other's loads and stores.
      const std::uintptr_t apart = (at - before) % 4096;
      EXPECT_GE(std::min(apart, 4096 - apart), 256u) << "shard " << i << " of " << len;
    }
    EXPECT_EQ(offsets.size(), stripe.shard_count()) << "shards of " << len << " bytes share an offset in the page";
  }
}

TEST(RsStripe, ReconstructInPlaceGivesBackTheShards) {
  const Codec codec(12, 4, {.backend = Backend::cpu});
  const std::size_t len = 4096;
  const Stripe stripe(codec, len);
  for (std::size_t i = 0; i < 12; ++i)
    for (std::size_t b = 0; b < len; ++b) stripe.shard(i)[b] = static_cast<std::uint8_t>(i * 131 + b * 7);
  codec.encode(stripe.shards(), len);
  const std::vector<std::size_t> erased = {0, 3, 12, 15};
  std::vector<std::vector<std::uint8_t>> kept;
  for (std::size_t i : erased) {
    kept.emplace_back(stripe.shard(i), stripe.shard(i) + len);
    std::fill_n(stripe.shard(i), len, std::uint8_t{0});
  }
  codec.reconstruct(stripe.shards(), len, erased);
  for (std::size_t e = 0; e < erased.size(); ++e)
    EXPECT_TRUE(std::equal(kept[e].begin(), kept[e].end(), stripe.shard(erased[e]))) << "shard " << erased[e];
}

}  // namespace
}  // namespace ncast::rs
