// Portable kernels: one product-table row per coefficient. The reference for every other level.
#include <algorithm>
#include <cstring>

#include "coding/gf256.hpp"
#include "coding/region_blocking.hpp"
#include "coding/region_levels.hpp"

namespace ncast::gf::detail {
namespace {

void mul(std::uint8_t* dst, const std::uint8_t* src, std::uint8_t c, std::size_t len) {
  const std::uint8_t* row = mul_row(c);
  for (std::size_t i = 0; i < len; ++i) dst[i] = row[src[i]];
}

void mul_add(std::uint8_t* dst, const std::uint8_t* src, std::uint8_t c, std::size_t len) {
  if (c == 0) return;
  const std::uint8_t* row = mul_row(c);
  for (std::size_t i = 0; i < len; ++i) dst[i] ^= row[src[i]];
}

void dot_multi(std::uint8_t* const* dsts, std::size_t m, const std::uint8_t* const* srcs, std::size_t k,
               const std::uint8_t* coefs, std::size_t len, bool accumulate) {
  if (trivial_dot_multi(dsts, m, k, len, accumulate)) return;
  for_each_block(m, k, len, 1, [&](std::size_t i, std::size_t, std::size_t off, std::size_t n) {
    std::uint8_t* d = dsts[i] + off;
    if (!accumulate) std::memset(d, 0, n);
    for (std::size_t j = 0; j < k; ++j) mul_add(d, srcs[j] + off, coefs[i * k + j], n);
  });
}

void dot(std::uint8_t* dst, const std::uint8_t* const* srcs, const std::uint8_t* coefs, std::size_t k,
         std::size_t len) {
  dot_multi(&dst, 1, srcs, k, coefs, len, false);
}

}  // namespace

const RegionKernels kScalarKernels{Level::scalar, mul, mul_add, dot, dot_multi};

}  // namespace ncast::gf::detail
