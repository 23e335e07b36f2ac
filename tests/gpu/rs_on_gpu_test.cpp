// The Reed–Solomon codec on the CUDA engine against the same codec on the CPU engine: byte-identical
// parity for the code sizes of the RS issue, and every erasure pattern of small codes rebuilt.
#include <gtest/gtest.h>

#include <bit>
#include <memory>
#include <random>
#include <vector>

#include "coding/cpu_engine.hpp"
#include "coding/rs/codec.hpp"
#include "gpu/cuda_engine.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace ncast::gpu {
namespace {

using gpu::testing::poison_bytes;
using gpu::testing::random_bytes;

struct Stripe {
  std::vector<std::vector<std::uint8_t>> shards;
  std::vector<std::uint8_t*> pointers() {
    std::vector<std::uint8_t*> p;
    for (auto& s : shards) p.push_back(s.data());
    return p;
  }
};

Stripe random_stripe(std::size_t k, std::size_t m, std::size_t len, std::mt19937_64& rng) {
  Stripe s;
  for (std::size_t i = 0; i < k; ++i) s.shards.push_back(random_bytes(len, rng));
  for (std::size_t i = 0; i < m; ++i) s.shards.push_back(poison_bytes(len, rng));
  return s;
}

TEST(RsOnGpu, EncodeIsByteIdenticalToTheCpuCodec) {
  NCAST_REQUIRE_CUDA_DEVICE();
  auto gpu_engine = std::make_shared<CudaEngine>();
  auto cpu_engine = std::make_shared<CpuEngine>();
  std::mt19937_64 rng(3);
  const std::size_t codes[][2] = {{1, 1}, {4, 2}, {10, 4}, {16, 4}, {32, 8}, {128, 32}, {200, 55}};
  for (const auto& [k, m] : codes)
    for (std::size_t len : {std::size_t{1}, std::size_t{1203}, std::size_t{65536}}) {
      SCOPED_TRACE(std::to_string(k) + "+" + std::to_string(m) + " len " + std::to_string(len));
      const rs::Codec on_gpu(k, m, {}, gpu_engine), on_cpu(k, m, {}, cpu_engine);
      Stripe a = random_stripe(k, m, len, rng), b = a;
      for (std::size_t p = 0; p < m; ++p) b.shards[k + p] = poison_bytes(len, rng);
      on_gpu.encode(a.pointers(), len);
      on_cpu.encode(b.pointers(), len);
      ASSERT_EQ(a.shards, b.shards);
    }
}

TEST(RsOnGpu, EveryErasurePatternOfSmallCodesIsRebuilt) {
  NCAST_REQUIRE_CUDA_DEVICE();
  auto engine = std::make_shared<CudaEngine>();
  std::mt19937_64 rng(4);
  std::size_t patterns = 0;
  const std::size_t codes[][2] = {{1, 1}, {4, 2}, {3, 3}, {6, 2}};
  for (const auto& [k, m] : codes) {
    const rs::Codec codec(k, m, {}, engine);
    const std::size_t n = k + m, len = 1001;
    Stripe original = random_stripe(k, m, len, rng);
    codec.encode(original.pointers(), len);
    for (unsigned mask = 1; mask < (1u << n); ++mask) {
      if (static_cast<std::size_t>(std::popcount(mask)) > m) continue;
      std::vector<std::size_t> erased;
      Stripe work = original;
      for (std::size_t i = 0; i < n; ++i)
        if (mask & (1u << i)) erased.push_back(i), work.shards[i] = poison_bytes(len, rng);
      codec.reconstruct(work.pointers(), len, erased);
      ASSERT_EQ(work.shards, original.shards) << k << "+" << m << " erased mask " << mask;
      ++patterns;
    }
  }
  EXPECT_EQ(patterns, 2u + 21u + 41u + 36u);
}

}  // namespace
}  // namespace ncast::gpu
