// The host segment cache (ncast-server --host-memory-mb): its byte budget holds, the least recently
// used block goes first, each miss reads once, and a block evicted while a sender holds it stays
// intact until the holder lets go, also when threads read through the cache at once.
#include "server/segment_cache.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

namespace ncast::server {
namespace {

constexpr std::size_t kBlock = 4096;

// Fills a block with its key's pattern and counts the reads.
struct Reader {
  std::atomic<int> reads{0};
  std::function<void(HostBuffer&)> of(std::uint64_t key) {
    return [this, key](HostBuffer& b) {
      ++reads;
      std::memset(b.data(), static_cast<int>(key & 0xFF), b.size());
    };
  }
};

bool holds(const SegmentBlock& b, std::uint64_t key) {
  for (std::size_t i = 0; i < b->size(); ++i)
    if (b->data()[i] != static_cast<std::uint8_t>(key)) return false;
  return true;
}

TEST(SegmentCache, StaysWithinItsBudgetAndReadsEachMissOnce) {
  Reader r;
  SegmentCache cache(Backend::cpu, 4 * kBlock);
  for (std::uint64_t k = 0; k < 20; ++k) {
    EXPECT_TRUE(holds(cache.get(k, kBlock, r.of(k)), k));
    EXPECT_LE(cache.stats().bytes, 4 * kBlock);
  }
  EXPECT_EQ(r.reads, 20);
  EXPECT_EQ(cache.stats().blocks, 4u);
  EXPECT_EQ(cache.stats().evictions, 16u);
  EXPECT_TRUE(holds(cache.get(19, kBlock, r.of(19)), 19));  // still held: no read
  EXPECT_EQ(r.reads, 20);
  EXPECT_EQ(cache.stats().hits, 1u);
}

TEST(SegmentCache, EvictsTheLeastRecentlyUsed) {
  Reader r;
  SegmentCache cache(Backend::cpu, 3 * kBlock);
  for (std::uint64_t k : {1, 2, 3}) cache.get(k, kBlock, r.of(k));
  cache.get(1, kBlock, r.of(1));  // 2 is now the least recent
  cache.get(4, kBlock, r.of(4));
  EXPECT_EQ(r.reads, 4);
  cache.get(1, kBlock, r.of(1));
  cache.get(3, kBlock, r.of(3));
  EXPECT_EQ(r.reads, 4) << "1 and 3 stayed";
  cache.get(2, kBlock, r.of(2));
  EXPECT_EQ(r.reads, 5) << "2 went";
}

TEST(SegmentCache, ABlockEvictedWhileHeldStaysIntactAndIsNotReused) {
  Reader r;
  SegmentCache cache(Backend::cpu, 2 * kBlock);
  const SegmentBlock held = cache.get(7, kBlock, r.of(7));
  const std::uint8_t* where = held->data();
  // Many reads of blocks of the same size: 7 is evicted early, and its memory must not serve them.
  for (std::uint64_t k = 100; k < 140; ++k) {
    const SegmentBlock b = cache.get(k, kBlock, r.of(k));
    EXPECT_NE(b->data(), where);
    EXPECT_TRUE(holds(b, k));
  }
  EXPECT_TRUE(holds(held, 7));
  EXPECT_LE(cache.stats().bytes, 2 * kBlock);
  EXPECT_EQ(cache.stats().evictions, 39u);
}

TEST(SegmentCache, ABlockLargerThanTheBudgetIsStillServed) {
  Reader r;
  SegmentCache cache(Backend::cpu, kBlock);
  EXPECT_TRUE(holds(cache.get(1, 3 * kBlock, r.of(1)), 1));
  EXPECT_TRUE(holds(cache.get(2, kBlock, r.of(2)), 2));
  EXPECT_EQ(cache.stats().blocks, 1u);
}

TEST(SegmentCache, AFailedReadCachesNothing) {
  SegmentCache cache(Backend::cpu, 4 * kBlock);
  EXPECT_THROW(cache.get(1, kBlock, [](HostBuffer&) { throw std::runtime_error("disk"); }), std::runtime_error);
  EXPECT_EQ(cache.stats().blocks, 0u);
  EXPECT_THROW(SegmentCache(Backend::cpu, 0), std::invalid_argument);
}

TEST(SegmentCache, ThreadsReadingAtOnceSeeTheirBlocksIntact) {
  Reader r;
  SegmentCache cache(Backend::cpu, 8 * kBlock);
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      std::vector<std::pair<std::uint64_t, SegmentBlock>> held;
      for (int i = 0; i < 2000; ++i) {
        const std::uint64_t k = (static_cast<std::uint64_t>(i) * 7 + static_cast<std::uint64_t>(t) * 13) % 40;
        held.emplace_back(k, cache.get(k, kBlock, r.of(k)));
        if (held.size() > 3) held.erase(held.begin());  // a sender holds a few blocks at a time
        for (const auto& [key, b] : held)
          if (!holds(b, key)) ++bad;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(bad, 0);
  EXPECT_LE(cache.stats().bytes, 8 * kBlock);
}

}  // namespace
}  // namespace ncast::server
