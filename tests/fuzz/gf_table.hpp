#pragma once
// GF(2^8) arithmetic for the fuzz targets' references: full product and inverse tables built from the
// independent shift-and-add multiply of tests/coding/gf_reference.hpp, never from the code under test.
#include <cstddef>
#include <cstdint>

#include "tests/coding/gf_reference.hpp"

namespace ncast::fuzz {

struct GfTable {
  std::uint8_t mul[256][256] = {};
  std::uint8_t inv[256] = {};
  GfTable() {
    for (unsigned a = 0; a < 256; ++a)
      for (unsigned b = 0; b < 256; ++b) {
        mul[a][b] = ncast::testing::slow_mul(static_cast<std::uint8_t>(a), static_cast<std::uint8_t>(b));
        if (mul[a][b] == 1) inv[a] = static_cast<std::uint8_t>(b);
      }
  }
};

inline const GfTable& gf() {
  static const GfTable table;
  return table;
}

// dst ^= c · src. A reference's inner loop is not what is under test: in the fuzz build it runs
// without instrumentation, or it would take most of every run.
#if defined(__clang__)
__attribute__((no_sanitize("address", "undefined", "coverage")))
#endif
inline void
axpy(std::uint8_t* dst, const std::uint8_t* src, std::uint8_t c, std::size_t len) {
  const std::uint8_t* row = gf().mul[c];
  for (std::size_t i = 0; i < len; ++i) dst[i] ^= row[src[i]];
}

}  // namespace ncast::fuzz
