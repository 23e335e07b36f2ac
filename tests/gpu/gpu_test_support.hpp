#pragma once
// What the GPU tests share: skipping without a device, and device buffers that start poisoned.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gpu/cuda_check.hpp"
#include "gpu/device_info.hpp"

// Skips the current test, reported SKIPPED with the reason, when this machine has no usable device.
#define NCAST_REQUIRE_CUDA_DEVICE()                                                       \
  do {                                                                                   \
    std::string ncast_why_;                                                              \
    if (::ncast::gpu::usable_devices(&ncast_why_).empty())                               \
      GTEST_SKIP() << "no usable CUDA device: " << ncast_why_;                           \
  } while (0)

namespace ncast::gpu::testing {

inline std::vector<std::uint8_t> random_bytes(std::size_t n, std::mt19937_64& rng) {
  std::vector<std::uint8_t> out(n);
  for (auto& b : out) b = static_cast<std::uint8_t>(rng());
  return out;
}

// Random bytes none of which is zero: a poison that a skipped write cannot match by accident of
// zero-initialised memory.
inline std::vector<std::uint8_t> poison_bytes(std::size_t n, std::mt19937_64& rng) {
  std::vector<std::uint8_t> out(n);
  for (auto& b : out) b = static_cast<std::uint8_t>(1 + rng() % 255);
  return out;
}

inline void to_device(void* dst, const std::vector<std::uint8_t>& src) {
  check(cudaMemcpy(dst, src.data(), src.size(), cudaMemcpyHostToDevice), "test upload");
}

inline std::vector<std::uint8_t> from_device(const void* src, std::size_t n) {
  std::vector<std::uint8_t> out(n);
  check(cudaMemcpy(out.data(), src, n, cudaMemcpyDeviceToHost), "test download");
  return out;
}

}  // namespace ncast::gpu::testing
