// The allocation hook: aligned by default, and whatever a backend installs once it does.
#include "coding/host_memory.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>

#include "coding/rs/codec.hpp"
#include "coding/rs/ncast_rs.h"
#include "coding/rs/stripe.hpp"

namespace ncast {
namespace {

int allocations = 0, releases = 0;

void* counting_allocate(std::size_t bytes) {
  ++allocations;
  return std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
}
void counting_release(void* p) {
  ++releases;
  std::free(p);
}

// Installs a counting allocator for the CPU backend and puts the old one back afterwards.
class HostMemoryHook : public ::testing::Test {
 protected:
  void SetUp() override {
    saved_ = host_allocator(Backend::cpu);
    allocations = releases = 0;
    set_host_allocator(Backend::cpu, {counting_allocate, counting_release, "counting"});
  }
  void TearDown() override { set_host_allocator(Backend::cpu, saved_); }
  HostAllocator saved_;
};

TEST(HostMemory, DefaultBuffersAreAligned) {
  for (std::size_t bytes : {1u, 63u, 4097u}) {
    const HostBuffer b = allocate_host(Backend::automatic, bytes);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b.data()) % kHostAlignment, 0u);
    EXPECT_EQ(b.size(), bytes);
    EXPECT_EQ(b.kind(), "aligned");
  }
}

TEST_F(HostMemoryHook, CodecStripesAndTheCApiAllocateThroughTheInstalledHook) {
  {
    rs::Codec codec(4, 2, {.backend = Backend::cpu});
    const HostBuffer b = codec.allocate(100);
    EXPECT_EQ(b.kind(), "counting");
    const rs::Stripe stripe(codec, 1000);
    EXPECT_EQ(stripe.shard_count(), 6u);
    for (std::size_t i = 0; i < 6; ++i) EXPECT_EQ(reinterpret_cast<std::uintptr_t>(stripe.shard(i)) % 64, 0u);
    EXPECT_EQ(allocations, 2);
  }
  EXPECT_EQ(releases, 2);

  ncast_rs_options options;
  ncast_rs_options_init(&options);
  options.backend = NCAST_RS_BACKEND_CPU;
  ncast_rs* codec = nullptr;
  ASSERT_EQ(ncast_rs_create(&codec, 3, 1, &options), NCAST_RS_OK);
  void* p = ncast_rs_alloc(codec, 10);
  ASSERT_NE(p, nullptr);
  ncast_rs_free(codec, p);
  ncast_rs_destroy(codec);
  EXPECT_EQ(allocations, 3);
  EXPECT_EQ(releases, 3);
}

}  // namespace
}  // namespace ncast
