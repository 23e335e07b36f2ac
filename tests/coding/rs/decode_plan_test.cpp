// The order in which a reconstruction walks its shards (walk_like_encode), and the per-call checks of a
// repeated erasure list.
#include "coding/rs/decode_plan.hpp"

#include <gtest/gtest.h>

#include <initializer_list>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "coding/rs/codec.hpp"
#include "tests/coding/rs/rs_test_support.hpp"

namespace ncast::rs {
namespace {

DecodePlan plan_of(std::initializer_list<std::size_t> sources, std::initializer_list<std::size_t> outputs) {
  DecodePlan p;
  for (std::size_t s : sources) p.used[p.source_count++] = s;
  for (std::size_t o : outputs) p.used[p.source_count + p.output_count++] = o;
  return p;
}

std::vector<std::size_t> walk(std::initializer_list<std::size_t> sources, std::initializer_list<std::size_t> outputs) {
  DecodePlan p = plan_of(sources, outputs);
  walk_like_encode(p);
  return {p.all().begin(), p.all().end()};
}

TEST(DecodePlanWalk, LostDataShardsAreRebuiltInTheMirrorOfTheEncodesWalk) {
  // 4+2 with data shards 0 and 1 lost: the encode reads 0..3 upwards towards parity 4, 5 above them;
  // the decode reads 5..2 downwards towards 1, 0 below them.
  EXPECT_EQ(walk({2, 3, 4, 5}, {0, 1}), (std::vector<std::size_t>{5, 4, 3, 2, 1, 0}));
  // 6+3 with data shard 1 lost: it lies below the sources' middle (parity 6 is one of them).
  EXPECT_EQ(walk({0, 2, 3, 4, 5, 6}, {1}), (std::vector<std::size_t>{6, 5, 4, 3, 2, 0, 1}));
}

TEST(DecodePlanWalk, LostParityIsRebuiltInTheEncodesOwnOrder) {
  EXPECT_EQ(walk({0, 1, 2, 3}, {4, 5}), (std::vector<std::size_t>{0, 1, 2, 3, 4, 5}));
  // 4+2 with data shard 3 lost: above the sources' middle, so the walk goes up towards it.
  EXPECT_EQ(walk({0, 1, 2, 4}, {3}), (std::vector<std::size_t>{0, 1, 2, 4, 3}));
  // Outputs on both sides, balanced around the sources: nothing to mirror.
  EXPECT_EQ(walk({1, 2, 3, 4}, {0, 5}), (std::vector<std::size_t>{1, 2, 3, 4, 0, 5}));
  EXPECT_EQ(walk({0, 1, 2, 3}, {}), (std::vector<std::size_t>{0, 1, 2, 3}));
}

// The thread's recent plan skips planning, not the checks: a null shard of a repeated list is named.
TEST(DecodePlanWalk, ARepeatedListStillNamesANullShard) {
  std::mt19937_64 rng(29);
  Codec codec(4, 2);
  testing::TestStripe original(4, 2, 256, rng);
  auto ptrs = original.pointers();
  codec.encode(ptrs, 256);
  const std::vector<std::size_t> lost{0, 1};
  for (const auto& [shard, role] : {std::pair<std::size_t, std::string>{3, "read"}, {1, "rebuilt"}}) {
    testing::TestStripe work = original;
    auto wp = work.pointers();
    codec.reconstruct(wp, 256, lost);  // now the thread's recent plan
    EXPECT_EQ(work.shards, original.shards);
    wp[shard] = nullptr;
    try {
      codec.reconstruct(wp, 256, lost);
      FAIL() << "expected invalid_argument";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("shard " + std::to_string(shard) + " is null but " + role),
                std::string::npos)
          << e.what();
    }
  }
  EXPECT_GE(codec.decode_cache().hits(), 2u);
}

}  // namespace
}  // namespace ncast::rs
