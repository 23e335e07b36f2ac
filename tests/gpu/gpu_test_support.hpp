#pragma once
// What the GPU tests share: skipping without a device, and device buffers that start poisoned.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gpu/cuda_check.hpp"
#include "gpu/device_info.hpp"
#include "gpu/device_matrix.hpp"
#include "gpu/device_memory.hpp"

// Skips the current test, reported SKIPPED with the reason, when this machine has no usable device.
#define NCAST_REQUIRE_CUDA_DEVICE()                                                                                 \
  do {                                                                                                              \
    std::string ncast_why_;                                                                                         \
    if (::ncast::gpu::usable_devices(&ncast_why_).empty()) GTEST_SKIP() << "no usable CUDA device: " << ncast_why_; \
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

// A k×len or m×len matrix in a device buffer with a pitch that is a multiple of 16 but not of 32
// and a start 16 bytes in: the least the kernels may assume. Every byte of the buffer, padding
// included, starts as poison.
struct PoisonedMatrix {
  std::size_t rows, cols, pitch, offset = 16;
  DeviceBuffer buffer;
  std::vector<std::uint8_t> initial;

  PoisonedMatrix(std::size_t r, std::size_t c, std::mt19937_64& rng)
      : rows(r), cols(c), pitch((c + 15) / 16 * 16 + 16), buffer(offset + r * pitch + 16, "test matrix") {
    initial = poison_bytes(buffer.size(), rng);
    to_device(buffer.get(), initial);
  }
  DeviceMatrixRef ref() { return {buffer.get() + offset, rows, cols, pitch}; }
  void set_rows(const std::vector<std::vector<std::uint8_t>>& contents) {
    for (std::size_t i = 0; i < rows; ++i)
      std::copy(contents[i].begin(), contents[i].end(), initial.begin() + static_cast<long>(offset + i * pitch));
    to_device(buffer.get(), initial);
  }
  std::vector<std::uint8_t> row(const std::vector<std::uint8_t>& all, std::size_t i) const {
    const auto* p = all.data() + offset + i * pitch;
    return {p, p + cols};
  }
  // True when no byte outside the rows' first `cols` bytes changed.
  bool outside_untouched(const std::vector<std::uint8_t>& all) const {
    for (std::size_t b = 0; b < all.size(); ++b) {
      const bool inside = b >= offset && b < offset + rows * pitch && (b - offset) % pitch < cols;
      if (!inside && all[b] != initial[b]) return false;
    }
    return true;
  }
};

inline std::uint8_t random_coef(std::mt19937_64& rng) {
  const unsigned r = rng() % 8;  // 0 and 1 are special for some techniques: give them a fair share
  return r == 0 ? 0 : r == 1 ? 1 : static_cast<std::uint8_t>(rng());
}

}  // namespace ncast::gpu::testing
