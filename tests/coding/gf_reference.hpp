#pragma once
// An independent GF(2^8) multiply for the tests: shift-and-add with reduction by 0x11D, no tables.
#include <cstdint>

namespace ncast::testing {

constexpr std::uint8_t slow_mul(std::uint8_t a, std::uint8_t b) {
  unsigned x = a, product = 0;
  for (unsigned bit = 0; bit < 8; ++bit) {
    if (b & (1u << bit)) product ^= x;
    x <<= 1;
    if (x & 0x100) x ^= 0x11D;
  }
  return static_cast<std::uint8_t>(product);
}

}  // namespace ncast::testing
