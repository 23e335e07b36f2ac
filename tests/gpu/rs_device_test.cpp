// RS on device-resident stripes against the CPU codec: parity byte-identical, every erasure pattern
// of small codes rebuilt on the device, random patterns of 10+4 and 32+8, and the refusals.
#include "gpu/rs_device.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <random>
#include <stdexcept>
#include <vector>

#include "coding/cpu_engine.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace ncast::gpu {
namespace {

using gpu::testing::from_device;
using gpu::testing::poison_bytes;
using gpu::testing::random_bytes;

std::vector<std::vector<std::uint8_t>> read_stripe(const DeviceMatrix& m) {
  const auto all = from_device(m.cref().data, m.rows() * m.pitch());
  std::vector<std::vector<std::uint8_t>> rows;
  for (std::size_t i = 0; i < m.rows(); ++i)
    rows.emplace_back(all.begin() + static_cast<long>(i * m.pitch()),
                      all.begin() + static_cast<long>(i * m.pitch() + m.cols()));
  return rows;
}

void write_rows(DeviceMatrix& m, const std::vector<std::vector<std::uint8_t>>& rows) {
  std::vector<const std::uint8_t*> p;
  for (const auto& r : rows) p.push_back(r.data());
  m.upload(p.data());
  check(cudaDeviceSynchronize(), "test upload");
}

// The CPU codec's encoding of random data: the reference stripe.
std::vector<std::vector<std::uint8_t>> reference_stripe(const rs::Codec& cpu, std::size_t len, std::mt19937_64& rng) {
  std::vector<std::vector<std::uint8_t>> shards;
  for (std::size_t i = 0; i < cpu.data_shards(); ++i) shards.push_back(random_bytes(len, rng));
  for (std::size_t i = 0; i < cpu.parity_shards(); ++i) shards.push_back(poison_bytes(len, rng));
  std::vector<std::uint8_t*> p;
  for (auto& s : shards) p.push_back(s.data());
  cpu.encode(p, len);
  return shards;
}

void check_code(std::size_t k, std::size_t m, std::size_t len, bool every_pattern, std::mt19937_64& rng) {
  SCOPED_TRACE(std::to_string(k) + "+" + std::to_string(m));
  const rs::Codec cpu(k, m, {}, std::make_shared<CpuEngine>());
  const auto want = reference_stripe(cpu, len, rng);
  DeviceRsCodec codec(cpu);
  DeviceMatrix stripe(k + m, len);
  auto work = want;
  for (std::size_t p = 0; p < m; ++p) work[k + p] = poison_bytes(len, rng);
  write_rows(stripe, work);
  codec.encode(stripe.ref(), nullptr);
  ASSERT_EQ(read_stripe(stripe), want);

  std::vector<std::vector<std::size_t>> patterns;
  const std::size_t n = k + m;
  if (every_pattern) {
    for (unsigned mask = 1; mask < (1u << n); ++mask)
      if (static_cast<std::size_t>(std::popcount(mask)) <= m) {
        patterns.emplace_back();
        for (std::size_t i = 0; i < n; ++i)
          if (mask & (1u << i)) patterns.back().push_back(i);
      }
  } else {
    for (int t = 0; t < 20; ++t) {
      std::vector<std::size_t> all(n);
      for (std::size_t i = 0; i < n; ++i) all[i] = i;
      std::shuffle(all.begin(), all.end(), rng);
      all.resize(1 + rng() % m);
      patterns.push_back(all);
    }
  }
  for (const auto& erased : patterns) {
    auto broken = want;
    for (std::size_t e : erased) broken[e] = poison_bytes(len, rng);
    write_rows(stripe, broken);
    codec.reconstruct(stripe.ref(), erased, nullptr);
    ASSERT_EQ(read_stripe(stripe), want) << "erased " << ::testing::PrintToString(erased);
  }
}

TEST(DeviceRs, EncodeAndEveryErasurePatternMatchTheCpuCodec) {
  NCAST_REQUIRE_CUDA_DEVICE();
  std::mt19937_64 rng(31);
  check_code(1, 1, 1000, true, rng);
  check_code(4, 2, 4099, true, rng);
  check_code(3, 3, 77, true, rng);
  check_code(10, 4, 65536 + 3, false, rng);
  check_code(32, 8, 5000, false, rng);
}

TEST(DeviceRs, RefusesWhatItCannotDo) {
  NCAST_REQUIRE_CUDA_DEVICE();
  const rs::Codec cpu(4, 2, {}, std::make_shared<CpuEngine>());
  DeviceRsCodec codec(cpu);
  DeviceMatrix stripe(6, 100), wrong(5, 100);
  EXPECT_THROW(codec.encode(wrong.ref(), nullptr), std::invalid_argument);
  const std::size_t three[] = {0, 1, 2}, missing[] = {6};
  EXPECT_THROW(codec.reconstruct(stripe.ref(), three, nullptr), rs::Unrecoverable);
  EXPECT_THROW(codec.reconstruct(stripe.ref(), missing, nullptr), std::invalid_argument);
}

}  // namespace
}  // namespace ncast::gpu
