// Many small stripes in one call, in scattered and in shard-major layouts.
#include <gtest/gtest.h>

#include <random>
#include <stdexcept>
#include <vector>

#include "coding/rs/codec.hpp"
#include "tests/coding/rs/rs_test_support.hpp"

namespace ncast::rs {
namespace {

using testing::TestStripe;

TEST(RsBatch, ScatteredStripesEqualPerStripeEncode) {
  std::mt19937_64 rng(51);
  const std::size_t k = 10, m = 4, len = 96, count = 37;
  auto engine = std::make_shared<testing::CountingEngine>();
  Codec codec(k, m, {}, engine);
  std::vector<TestStripe> stripes, expected;
  std::vector<std::uint8_t*> all;
  for (std::size_t s = 0; s < count; ++s) {
    stripes.emplace_back(k, m, len, rng);
    expected.push_back(stripes.back());
    auto ep = expected.back().pointers();
    codec.encode(ep, len);
  }
  for (auto& s : stripes)
    for (auto* p : s.pointers()) all.push_back(p);
  engine->calls = 0;
  codec.encode_batch(all, len);
  for (std::size_t s = 0; s < count; ++s) ASSERT_EQ(stripes[s].shards, expected[s].shards) << "stripe " << s;
  EXPECT_EQ(engine->calls, static_cast<int>(count));  // nothing contiguous to merge
}

TEST(RsBatch, ShardMajorLayoutIsCodedAsOneRegion) {
  std::mt19937_64 rng(52);
  const std::size_t k = 6, m = 3, len = 64, count = 50;
  auto engine = std::make_shared<testing::CountingEngine>();
  Codec codec(k, m, {.matrix = MatrixKind::vandermonde}, engine);
  // Shard i of every stripe in one region: stripe s's shard i starts at regions[i] + s·len.
  std::vector<testing::Bytes> regions;
  for (std::size_t i = 0; i < k + m; ++i) regions.push_back(testing::random_bytes(len * count, rng));
  std::vector<std::uint8_t*> all;
  for (std::size_t s = 0; s < count; ++s)
    for (std::size_t i = 0; i < k + m; ++i) all.push_back(regions[i].data() + s * len);

  // Per-stripe reference from the same data.
  std::vector<TestStripe> expected;
  for (std::size_t s = 0; s < count; ++s) {
    TestStripe t(k, m, len, rng);
    for (std::size_t j = 0; j < k; ++j)
      std::copy_n(regions[j].begin() + static_cast<long>(s * len), len, t.shards[j].begin());
    auto tp = t.pointers();
    codec.encode(tp, len);
    expected.push_back(t);
  }
  engine->calls = 0;
  codec.encode_batch(all, len);
  EXPECT_EQ(engine->calls, 1);
  for (std::size_t s = 0; s < count; ++s)
    for (std::size_t i = 0; i < k + m; ++i)
      ASSERT_TRUE(std::equal(expected[s].shards[i].begin(), expected[s].shards[i].end(),
                             regions[i].begin() + static_cast<long>(s * len)))
          << "stripe " << s << " shard " << i;

  // A failed "disk": the same two shards lost in every stripe, rebuilt in one product as well.
  const auto good = regions;
  regions[1] = testing::random_bytes(len * count, rng);
  regions[7] = testing::random_bytes(len * count, rng);
  all.clear();
  for (std::size_t s = 0; s < count; ++s)
    for (std::size_t i = 0; i < k + m; ++i) all.push_back(regions[i].data() + s * len);
  engine->calls = 0;
  const std::vector<std::size_t> lost{1, 7};
  codec.reconstruct_batch(all, len, lost);
  EXPECT_EQ(engine->calls, 1);
  EXPECT_EQ(regions, good);
}

TEST(RsBatch, ReconstructsScatteredStripes) {
  std::mt19937_64 rng(53);
  const std::size_t k = 4, m = 2, len = 33, count = 9;
  Codec codec(k, m);
  std::vector<TestStripe> stripes, originals;
  for (std::size_t s = 0; s < count; ++s) {
    stripes.emplace_back(k, m, len, rng);
    auto p = stripes.back().pointers();
    codec.encode(p, len);
    originals.push_back(stripes.back());
    stripes.back().shards[0] = testing::random_bytes(len, rng);
    stripes.back().shards[5] = testing::random_bytes(len, rng);
  }
  std::vector<std::uint8_t*> all;
  for (auto& s : stripes)
    for (auto* p : s.pointers()) all.push_back(p);
  const std::vector<std::size_t> lost{0, 5};
  codec.reconstruct_batch(all, len, lost);
  for (std::size_t s = 0; s < count; ++s) ASSERT_EQ(stripes[s].shards, originals[s].shards) << "stripe " << s;
}

TEST(RsBatch, RejectsPartialStripesAndNullShards) {
  std::mt19937_64 rng(54);
  Codec codec(3, 2);
  TestStripe a(3, 2, 16, rng), b(3, 2, 16, rng);
  auto all = a.pointers();
  for (auto* p : b.pointers()) all.push_back(p);
  EXPECT_THROW(codec.encode_batch(std::span(all).first(7), 16), std::invalid_argument);
  all[8] = nullptr;
  EXPECT_THROW(codec.encode_batch(all, 16), std::invalid_argument);
  codec.encode_batch(std::span<std::uint8_t* const>(), 16);  // no stripes: nothing to do
}

}  // namespace
}  // namespace ncast::rs
