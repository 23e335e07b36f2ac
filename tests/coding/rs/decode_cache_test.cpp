// The LRU of decode rows on its own, and as the codec uses it (also from several threads).
#include "coding/rs/decode_cache.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <span>
#include <thread>
#include <vector>

#include "coding/rs/codec.hpp"
#include "tests/coding/rs/rs_test_support.hpp"

namespace ncast::rs {
namespace {

DecodeKey key(std::size_t lost) {
  DecodeKey k;
  k.outputs.set(lost);
  return k;
}

DecodeRows rows(std::uint8_t tag) { return std::make_shared<const std::vector<std::uint8_t>>(3, tag); }

TEST(DecodeCache, EvictsTheLeastRecentlyUsed) {
  DecodeCache cache(2);
  cache.insert(key(1), rows(1));
  cache.insert(key(2), rows(2));
  ASSERT_TRUE(cache.find(key(1)));  // 1 is now more recent than 2
  cache.insert(key(3), rows(3));
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_FALSE(cache.find(key(2)));
  ASSERT_TRUE(cache.find(key(1)));
  ASSERT_TRUE(cache.find(key(3)));
  EXPECT_EQ(cache.find(key(3))->at(0), 3);
  EXPECT_EQ(cache.hits(), 4u);
  EXPECT_EQ(cache.misses(), 1u);
}

TEST(DecodeCache, FirstInsertWinsAndEvictedRowsStayAliveForTheirHolders) {
  DecodeCache cache(1);
  const DecodeRows first = cache.insert(key(1), rows(1));
  EXPECT_EQ(cache.insert(key(1), rows(9))->at(0), 1);
  cache.insert(key(2), rows(2));
  EXPECT_FALSE(cache.find(key(1)));
  EXPECT_EQ(first->at(0), 1);
}

TEST(DecodeCache, ZeroCapacityKeepsNothing) {
  DecodeCache cache(0);
  EXPECT_EQ(cache.insert(key(1), rows(1))->at(0), 1);
  EXPECT_FALSE(cache.find(key(1)));
  EXPECT_EQ(cache.size(), 0u);
}

TEST(CodecDecodeCache, RepeatedPatternsHitAndTheCacheStaysBounded) {
  std::mt19937_64 rng(41);
  Codec codec(8, 4, {.decode_cache_capacity = 3});
  testing::TestStripe s(8, 4, 100, rng);
  auto ptrs = s.pointers();
  codec.encode(ptrs, 100);
  const std::vector<std::size_t> lost{2, 9};
  codec.reconstruct(ptrs, 100, lost);
  codec.reconstruct(ptrs, 100, lost);
  EXPECT_EQ(codec.decode_cache().misses(), 1u);
  EXPECT_EQ(codec.decode_cache().hits(), 1u);
  for (std::size_t e = 0; e < 6; ++e) {
    const std::vector<std::size_t> one{e};
    codec.reconstruct(ptrs, 100, one);
  }
  EXPECT_EQ(codec.decode_cache().size(), 3u);
  codec.clear_decode_cache();
  EXPECT_EQ(codec.decode_cache().size(), 0u);
}

// The thread's recent plan (decode_plan.hpp) answers a repeated erasure list, but never a list worded
// otherwise, another kind of request, another codec, or a cleared cache.
TEST(CodecDecodeCache, TheRecentPlanServesOnlyTheSameRequestOfTheSameCodec) {
  std::mt19937_64 rng(43);
  Codec codec(8, 4), other(6, 4);
  testing::TestStripe original(8, 4, 300, rng), other_original(6, 4, 300, rng);
  auto op = original.pointers(), oop = other_original.pointers();
  codec.encode(op, 300);
  other.encode(oop, 300);
  const std::vector<std::size_t> lost{1, 9};
  const auto damaged = [&](const testing::TestStripe& s, std::span<const std::size_t> erased) {
    testing::TestStripe w = s;
    for (std::size_t e : erased) std::fill(w.shards[e].begin(), w.shards[e].end(), std::uint8_t{0});
    return w;
  };
  for (int round = 0; round < 2; ++round) {
    testing::TestStripe w = damaged(original, lost);
    auto wp = w.pointers();
    codec.reconstruct(wp, 300, lost);
    EXPECT_EQ(w.shards, original.shards);
    // The same list, data only: parity shard 9 is not rebuilt, so it may be null.
    w = damaged(original, lost);
    wp = w.pointers();
    wp[9] = nullptr;
    codec.reconstruct_data(wp, 300, lost);
    EXPECT_EQ(w.shards[1], original.shards[1]);
    // The same list, only shard 9 wanted.
    w = damaged(original, lost);
    wp = w.pointers();
    wp[1] = nullptr;
    const std::vector<std::size_t> wanted{9};
    codec.reconstruct(wp, 300, lost, wanted);
    EXPECT_EQ(w.shards[9], original.shards[9]);
    // Another codec on this thread, the same list, twice (the second from the recent plan).
    for (int again = 0; again < 2; ++again) {
      testing::TestStripe ow = damaged(other_original, lost);
      auto owp = ow.pointers();
      other.reconstruct(owp, 300, lost);
      EXPECT_EQ(ow.shards, other_original.shards);
    }
  }
  EXPECT_EQ(other.decode_cache().misses(), 1u);
  EXPECT_EQ(other.decode_cache().hits(), 3u);
  EXPECT_EQ(codec.decode_cache().misses(), 3u);  // all, data only, shard 9: each inverted once
  EXPECT_EQ(codec.decode_cache().hits(), 3u);
  codec.clear_decode_cache();
  testing::TestStripe w = damaged(original, lost);
  auto wp = w.pointers();
  codec.reconstruct(wp, 300, lost);
  EXPECT_EQ(w.shards, original.shards);
  EXPECT_EQ(codec.decode_cache().misses(), 4u);  // cleared: inverted again
}

TEST(CodecDecodeCache, ConcurrentReconstructionsWithConstantEvictionAgree) {
  Codec codec(10, 4, {.decode_cache_capacity = 2});
  std::mt19937_64 seed_rng(42);
  testing::TestStripe original(10, 4, 2048, seed_rng);
  auto op = original.pointers();
  codec.encode(op, 2048);
  std::vector<int> failures(4, 0);
  std::vector<std::thread> threads;
  threads.reserve(4);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(100 + t);
      for (int trial = 0; trial < 150; ++trial) {
        std::vector<std::size_t> all(14);
        for (std::size_t i = 0; i < 14; ++i) all[i] = i;
        std::shuffle(all.begin(), all.end(), rng);
        all.resize(1 + rng() % 4);
        testing::TestStripe work = original;
        for (std::size_t e : all) work.shards[e] = testing::random_bytes(2048, rng);
        auto wp = work.pointers();
        codec.reconstruct(wp, 2048, all);
        if (work.shards != original.shards) ++failures[t];
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures, std::vector<int>(4, 0));
  EXPECT_LE(codec.decode_cache().size(), 2u);
}

}  // namespace
}  // namespace ncast::rs
