// The segment store: resident bytes, the budget, least-recently-used eviction, segments held by a
// user outliving their eviction, and the refusals.
#include "gpu/segment_store.hpp"

#include <gtest/gtest.h>

#include <random>
#include <stdexcept>
#include <vector>

#include "tests/gpu/gpu_test_support.hpp"

namespace ncast::gpu {
namespace {

using gpu::testing::from_device;
using gpu::testing::random_bytes;

const rlnc::GenerationLayout kLayout(4, 1000, 4000);  // 4 rows of pitch 1024 on the device: 4096 bytes
constexpr std::size_t kSegmentBytes = 4 * 1024;

std::vector<std::uint8_t> device_rows(const ResidentSegment& s) {
  DeviceGuard guard(s.device);
  const auto all = from_device(s.symbols.cref().data, s.symbols.rows() * s.symbols.pitch());
  std::vector<std::uint8_t> rows;
  for (std::size_t i = 0; i < s.symbols.rows(); ++i)
    rows.insert(rows.end(), all.begin() + static_cast<long>(i * s.symbols.pitch()),
                all.begin() + static_cast<long>(i * s.symbols.pitch() + s.symbols.cols()));
  return rows;
}

TEST(SegmentStore, KeepsSegmentsAndEvictsTheLeastRecentlyUsed) {
  NCAST_REQUIRE_CUDA_DEVICE();
  std::mt19937_64 rng(1);
  SegmentStore store(3 * kSegmentBytes, {0});
  std::vector<std::vector<std::uint8_t>> blocks;
  for (std::uint32_t g = 0; g < 3; ++g) {
    blocks.push_back(random_bytes(kLayout.block_bytes(), rng));
    store.put({7, g}, kLayout, blocks.back(), {99, g});
  }
  EXPECT_EQ(store.size(), 3u);
  EXPECT_EQ(store.bytes_resident(0), 3 * kSegmentBytes);
  const auto first = store.find({7, 0});  // now the most recent: segment 1 is the oldest
  ASSERT_TRUE(first);
  EXPECT_EQ(device_rows(*first), blocks[0]);
  EXPECT_EQ(first->seeds.seed, 99u);

  blocks.push_back(random_bytes(kLayout.block_bytes(), rng));
  store.put({7, 3}, kLayout, blocks.back(), {99, 3});
  EXPECT_EQ(store.evictions(), 1u);
  EXPECT_FALSE(store.find({7, 1}));
  for (std::uint32_t g : {0u, 2u, 3u}) {
    const auto s = store.find({7, g});
    ASSERT_TRUE(s) << g;
    EXPECT_EQ(device_rows(*s), blocks[g]);
  }
  // A segment in use outlives its eviction.
  const auto held = store.find({7, 0});
  store.put({8, 0}, kLayout, blocks[1], {5, 0});
  store.put({8, 1}, kLayout, blocks[1], {5, 1});
  store.put({8, 2}, kLayout, blocks[1], {5, 2});
  EXPECT_FALSE(store.find({7, 0}));
  EXPECT_EQ(device_rows(*held), blocks[0]);
  EXPECT_EQ(store.bytes_resident(0), 3 * kSegmentBytes);
  EXPECT_TRUE(store.erase({8, 1}));
  EXPECT_FALSE(store.erase({8, 1}));
  EXPECT_EQ(store.bytes_resident(0), 2 * kSegmentBytes);
}

TEST(SegmentStore, ReplacingASegmentKeepsOneCopy) {
  NCAST_REQUIRE_CUDA_DEVICE();
  std::mt19937_64 rng(2);
  SegmentStore store(10 * kSegmentBytes);
  const auto a = random_bytes(kLayout.block_bytes(), rng), b = random_bytes(kLayout.block_bytes(), rng);
  store.put({1, 1}, kLayout, a, {1, 1});
  store.put({1, 1}, kLayout, b, {1, 1});
  EXPECT_EQ(store.size(), 1u);
  EXPECT_EQ(device_rows(*store.find({1, 1})), b);
  std::size_t total = 0;
  for (int d : store.devices()) total += store.bytes_resident(d);
  EXPECT_EQ(total, kSegmentBytes);
}

TEST(SegmentStore, RefusesWhatCannotFit) {
  NCAST_REQUIRE_CUDA_DEVICE();
  EXPECT_THROW(SegmentStore(0), std::invalid_argument);
  EXPECT_THROW(SegmentStore(1 << 20, {1 << 20}), CudaError);
  SegmentStore store(kSegmentBytes - 1);
  const std::vector<std::uint8_t> block(kLayout.block_bytes(), 1);
  EXPECT_THROW(store.put({1, 1}, kLayout, block, {}), std::invalid_argument);
  SegmentStore roomy(kSegmentBytes);
  EXPECT_THROW(roomy.put({1, 1}, kLayout, std::span(block).first(10), {}), std::invalid_argument);
  EXPECT_EQ(roomy.size(), 0u);
}

TEST(SegmentStore, WithoutADeviceSaysWhy) {
  std::string why;
  if (!usable_devices(&why).empty()) GTEST_SKIP() << "a device is present; this case is for machines without one";
  EXPECT_THROW(SegmentStore(1 << 20), CudaError);
}

}  // namespace
}  // namespace ncast::gpu
