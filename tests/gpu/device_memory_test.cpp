#include "gpu/device_memory.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "gpu/cuda_check.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace ncast::gpu {
namespace {

// Both owners share one shell; each case runs on both.
template <class B>
class OwnedBuffer : public ::testing::Test {};
using Buffers = ::testing::Types<DeviceBuffer, PinnedBuffer>;
TYPED_TEST_SUITE(OwnedBuffer, Buffers);

void fill(std::uint8_t* dst, std::uint8_t value, std::size_t n) {
  const std::vector<std::uint8_t> bytes(n, value);
  check(cudaMemcpy(dst, bytes.data(), n, cudaMemcpyDefault), "test fill");
}

std::vector<std::uint8_t> read(const std::uint8_t* src, std::size_t n) {
  std::vector<std::uint8_t> out(n);
  check(cudaMemcpy(out.data(), src, n, cudaMemcpyDefault), "test read");
  return out;
}

TYPED_TEST(OwnedBuffer, HoldsWhatItWasAskedFor) {
  NCAST_REQUIRE_CUDA_DEVICE();
  const TypeParam empty;
  EXPECT_EQ(empty.get(), nullptr);
  EXPECT_EQ(empty.size(), 0u);
  const TypeParam none(0, "test buffer");
  EXPECT_EQ(none.get(), nullptr);
  EXPECT_EQ(none.size(), 0u);
  const TypeParam some(100, "test buffer");
  ASSERT_NE(some.get(), nullptr);
  EXPECT_EQ(some.size(), 100u);
  fill(some.get(), 0x5A, 100);
  EXPECT_EQ(read(some.get(), 100), std::vector<std::uint8_t>(100, 0x5A));
}

TYPED_TEST(OwnedBuffer, MovingHandsOverTheAllocation) {
  NCAST_REQUIRE_CUDA_DEVICE();
  TypeParam a(64, "test buffer");
  fill(a.get(), 0x11, 64);
  std::uint8_t* const held = a.get();

  TypeParam b(std::move(a));
  EXPECT_EQ(a.get(), nullptr);  // NOLINT(bugprone-use-after-move): the moved-from state is the point
  EXPECT_EQ(a.size(), 0u);      // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(b.get(), held);
  EXPECT_EQ(b.size(), 64u);

  // Assigning over a buffer that holds memory releases that memory and takes the other's.
  TypeParam c(32, "test buffer");
  c = std::move(b);
  EXPECT_EQ(b.get(), nullptr);  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(b.size(), 0u);      // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(c.get(), held);
  EXPECT_EQ(c.size(), 64u);
  EXPECT_EQ(read(c.get(), 64), std::vector<std::uint8_t>(64, 0x11));

  // A moved-from buffer can be given a new allocation.
  a = TypeParam(16, "test buffer");
  ASSERT_NE(a.get(), nullptr);
  EXPECT_EQ(a.size(), 16u);
}

}  // namespace
}  // namespace ncast::gpu
