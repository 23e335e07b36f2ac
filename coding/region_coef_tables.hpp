#pragma once
// Per-coefficient constants of the SIMD kernels, computed at compile time from the scalar field.
#include <array>
#include <cstdint>

#include "coding/gf256.hpp"

namespace ncast::gf::detail {

// GFNI: multiplying by c is linear over GF(2), so it is the 8×8 bit matrix that gf2p8affineqb
// applies to every byte. gf2p8mulb cannot be used: it is hard-wired to polynomial 0x11B.
// Byte 7-i of the matrix holds row i: the input bits that feed output bit i.
consteval std::array<std::uint64_t, 256> make_affine_matrices() {
  std::array<std::uint64_t, 256> out{};
  for (unsigned c = 0; c < 256; ++c) {
    std::uint64_t matrix = 0;
    for (unsigned i = 0; i < 8; ++i) {
      std::uint64_t row = 0;
      for (unsigned j = 0; j < 8; ++j)
        if (mul(static_cast<std::uint8_t>(c), static_cast<std::uint8_t>(1u << j)) & (1u << i)) row |= 1u << j;
      matrix |= row << (8 * (7 - i));
    }
    out[c] = matrix;
  }
  return out;
}

inline constexpr std::array<std::uint64_t, 256> kAffineMatrix = make_affine_matrices();

// PSHUFB: c·x = c·(x & 15) ^ c·(x & 240), each half a 16-entry table lookup.
struct NibbleTable {
  std::array<std::uint8_t, 16> lo;
  std::array<std::uint8_t, 16> hi;
};

consteval std::array<NibbleTable, 256> make_nibble_tables() {
  std::array<NibbleTable, 256> out{};
  for (unsigned c = 0; c < 256; ++c)
    for (unsigned x = 0; x < 16; ++x) {
      out[c].lo[x] = mul(static_cast<std::uint8_t>(c), static_cast<std::uint8_t>(x));
      out[c].hi[x] = mul(static_cast<std::uint8_t>(c), static_cast<std::uint8_t>(x << 4));
    }
  return out;
}

inline constexpr std::array<NibbleTable, 256> kNibbleTable = make_nibble_tables();

}  // namespace ncast::gf::detail
