// Reconstruction against the original shards: every erasure pattern of every code with k + m ≤ 12,
// random patterns of large codes, partial reconstruction, and the ways it must refuse.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <random>
#include <stdexcept>
#include <vector>

#include "coding/rs/codec.hpp"
#include "tests/coding/rs/rs_test_support.hpp"

namespace ncast::rs {
namespace {

using testing::Bytes;
using testing::TestStripe;

// An encoded stripe and a working copy whose erased shards are overwritten with poison.
struct Scenario {
  Scenario(const Codec& codec, std::size_t len, std::mt19937_64& rng)
      : original(codec.data_shards(), codec.parity_shards(), len, rng), len(len) {
    auto p = original.pointers();
    codec.encode(p, len);
    work = original;
  }
  void poison(std::span<const std::size_t> erased, std::mt19937_64& rng) {
    work = original;
    for (std::size_t e : erased) work.shards[e] = testing::random_bytes(len, rng);
  }
  TestStripe original, work;
  std::size_t len;
};

std::vector<std::size_t> random_pattern(std::size_t n, std::size_t count, std::mt19937_64& rng) {
  std::vector<std::size_t> all(n);
  for (std::size_t i = 0; i < n; ++i) all[i] = i;
  std::shuffle(all.begin(), all.end(), rng);
  all.resize(count);
  return all;
}

TEST(RsReconstruct, EveryErasurePatternOfEveryCodeUpTo12Shards) {
  std::mt19937_64 rng(21);
  std::size_t patterns = 0;
  for (MatrixKind kind : {MatrixKind::cauchy, MatrixKind::vandermonde})
    for (std::size_t n = 2; n <= 12; ++n)
      for (std::size_t m = 1; m < n; ++m) {
        const std::size_t k = n - m;
        Codec codec(k, m, {.matrix = kind});
        Scenario sc(codec, 61, rng);
        for (unsigned mask = 1; mask < (1u << n); ++mask) {
          if (static_cast<std::size_t>(std::popcount(mask)) > m) continue;
          std::vector<std::size_t> erased;
          for (std::size_t i = 0; i < n; ++i)
            if (mask & (1u << i)) erased.push_back(i);
          sc.poison(erased, rng);
          auto ptrs = sc.work.pointers();
          codec.reconstruct(ptrs, sc.len, erased);
          ASSERT_EQ(sc.work.shards, sc.original.shards)
              << to_string(kind) << " " << k << "+" << m << " erased mask " << mask;
          ++patterns;
        }
      }
  EXPECT_GT(patterns, 40000u);
}

TEST(RsReconstruct, RandomPatternsOfLargeCodes) {
  std::mt19937_64 rng(22);
  const std::pair<std::size_t, std::size_t> codes[] = {{10, 4}, {16, 4}, {32, 8}, {128, 32}, {200, 55}};
  for (MatrixKind kind : {MatrixKind::cauchy, MatrixKind::vandermonde})
    for (auto [k, m] : codes) {
      Codec codec(k, m, {.matrix = kind});
      Scenario sc(codec, 1001, rng);
      for (int trial = 0; trial < 12; ++trial) {
        const auto erased = random_pattern(k + m, 1 + rng() % m, rng);
        sc.poison(erased, rng);
        auto ptrs = sc.work.pointers();
        codec.reconstruct(ptrs, sc.len, erased);
        ASSERT_EQ(sc.work.shards, sc.original.shards) << to_string(kind) << " " << k << "+" << m << " trial " << trial;
      }
    }
}

TEST(RsReconstruct, EverySimdLevelRebuildsTheSame) {
  std::mt19937_64 rng(23);
  for (const auto& engine : testing::cpu_engines()) {
    Codec codec(16, 4, {}, engine);
    Scenario sc(codec, 4099, rng);
    for (int trial = 0; trial < 10; ++trial) {
      const auto erased = random_pattern(20, 1 + rng() % 4, rng);
      sc.poison(erased, rng);
      auto ptrs = sc.work.pointers();
      codec.reconstruct(ptrs, sc.len, erased);
      ASSERT_EQ(sc.work.shards, sc.original.shards) << engine->description();
    }
  }
}

TEST(RsReconstruct, OnlyTheWantedShardsAreWritten) {
  std::mt19937_64 rng(24);
  Codec codec(10, 4);
  Scenario sc(codec, 517, rng);
  for (int trial = 0; trial < 40; ++trial) {
    const auto erased = random_pattern(14, 1 + rng() % 4, rng);
    auto wanted = random_pattern(14, 1 + rng() % 6, rng);  // may name shards that are not erased
    sc.poison(erased, rng);
    const TestStripe before = sc.work;
    auto ptrs = sc.work.pointers();
    codec.reconstruct(ptrs, sc.len, erased, wanted);
    for (std::size_t i = 0; i < 14; ++i) {
      const bool lost = std::find(erased.begin(), erased.end(), i) != erased.end();
      const bool asked = std::find(wanted.begin(), wanted.end(), i) != wanted.end();
      ASSERT_EQ(sc.work.shards[i], lost && asked ? sc.original.shards[i] : before.shards[i]) << "shard " << i;
    }
  }
}

TEST(RsReconstruct, DataOnlyLeavesErasedParityAlone) {
  std::mt19937_64 rng(25);
  Codec codec(6, 3, {.matrix = MatrixKind::vandermonde});
  Scenario sc(codec, 300, rng);
  const std::vector<std::size_t> erased{1, 7, 4};
  sc.poison(erased, rng);
  const Bytes poisoned_parity = sc.work.shards[7];
  auto ptrs = sc.work.pointers();
  ptrs[7] = nullptr;  // not rebuilt, so it need not exist
  codec.reconstruct_data(ptrs, sc.len, erased);
  EXPECT_EQ(sc.work.shards[1], sc.original.shards[1]);
  EXPECT_EQ(sc.work.shards[4], sc.original.shards[4]);
  EXPECT_EQ(sc.work.shards[7], poisoned_parity);
}

TEST(RsReconstruct, MoreThanMErasedIsUnrecoverable) {
  std::mt19937_64 rng(26);
  Codec codec(4, 2);
  Scenario sc(codec, 64, rng);
  auto ptrs = sc.work.pointers();
  const std::vector<std::size_t> erased{0, 2, 5};
  EXPECT_THROW(codec.reconstruct(ptrs, sc.len, erased), Unrecoverable);
  EXPECT_THROW(codec.sources_for(erased), Unrecoverable);
  // Listing a shard twice does not make it two losses.
  const std::vector<std::size_t> twice{3, 3, 0};
  sc.poison(twice, rng);
  ptrs = sc.work.pointers();
  codec.reconstruct(ptrs, sc.len, twice);
  EXPECT_EQ(sc.work.shards, sc.original.shards);
}

TEST(RsReconstruct, NonMdsCustomMatrixNamesTheSurvivors) {
  std::mt19937_64 rng(27);
  // Two equal parity rows: losing both data shards leaves two copies of the same equation.
  Matrix custom(2, 2, std::vector<std::uint8_t>{1, 2, 1, 2});
  Codec codec(2, 2, {.matrix = MatrixKind::custom, .custom_parity = custom});
  Scenario sc(codec, 50, rng);
  auto ptrs = sc.work.pointers();
  const std::vector<std::size_t> both_data{0, 1};
  try {
    codec.reconstruct(ptrs, sc.len, both_data);
    FAIL() << "expected Unrecoverable";
  } catch (const Unrecoverable& e) {
    EXPECT_NE(std::string(e.what()).find("{2,3}"), std::string::npos) << e.what();
  }
  const std::vector<std::size_t> one{1, 2};
  sc.poison(one, rng);
  ptrs = sc.work.pointers();
  codec.reconstruct(ptrs, sc.len, one);
  EXPECT_EQ(sc.work.shards, sc.original.shards);
}

TEST(RsReconstruct, RejectsBadIndicesAndMissingBuffers) {
  std::mt19937_64 rng(28);
  Codec codec(4, 2);
  Scenario sc(codec, 64, rng);
  auto ptrs = sc.work.pointers();
  const std::vector<std::size_t> outside{6}, none{}, lost{1};
  EXPECT_THROW(codec.reconstruct(ptrs, sc.len, outside), std::invalid_argument);
  EXPECT_THROW(codec.reconstruct(ptrs, sc.len, lost, outside), std::invalid_argument);
  EXPECT_THROW(codec.reconstruct(std::span(ptrs).first(5), sc.len, lost), std::invalid_argument);
  ptrs[1] = nullptr;  // erased and wanted, so it must have a buffer
  EXPECT_THROW(codec.reconstruct(ptrs, sc.len, lost), std::invalid_argument);
  ptrs = sc.work.pointers();
  ptrs[0] = nullptr;  // a survivor that is read
  EXPECT_THROW(codec.reconstruct(ptrs, sc.len, lost), std::invalid_argument);
  ptrs = sc.work.pointers();
  codec.reconstruct(ptrs, sc.len, none);  // nothing lost: nothing to do
  EXPECT_EQ(sc.work.shards, sc.original.shards);
}

}  // namespace
}  // namespace ncast::rs
