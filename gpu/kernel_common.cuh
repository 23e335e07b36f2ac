#pragma once
// Device helpers shared by the GF(2^8) kernels.
#include <cstddef>
#include <cstdint>

#include "gpu/kernel_launch.hpp"

namespace ncast::gpu::detail {

// The problem this block works on, by value: a reference into the parameter space would make the
// compiler copy the whole argument block to the stack. A skipped problem has no outputs.
__device__ inline KernelProblem block_problem(const KernelArgs& args, unsigned z) {
  KernelProblem p = args.batch != nullptr ? args.batch[z] : args.one;
  if (p.skip != nullptr && *p.skip != 0) p.m = 0;
  return p;
}

// Multiplication by x (= 2) in GF(2^8) mod 0x11D.
__host__ __device__ constexpr std::uint32_t xtime(std::uint32_t a) {
  return ((a << 1) ^ ((a & 0x80u) ? 0x1Du : 0u)) & 0xFFu;
}

// The 4-byte word of row at byte col, bytes at or past len read as zero. col is a multiple of 4 and
// rows are 16-byte aligned, so a whole word is one aligned load.
__device__ inline std::uint32_t load_word(const std::uint8_t* row, std::size_t col, std::size_t len) {
  if (col + 4 <= len) return __ldg(reinterpret_cast<const std::uint32_t*>(row + col));
  std::uint32_t w = 0;
  for (std::size_t b = 0; col + b < len && b < 4; ++b) w |= std::uint32_t{__ldg(row + col + b)} << (8 * b);
  return w;
}

// Writes the bytes of w that fall before len (xor-ing into what is there when accumulate).
__device__ inline void store_word(std::uint8_t* row, std::size_t col, std::size_t len, std::uint32_t w,
                                  bool accumulate) {
  if (col + 4 <= len) {
    auto* p = reinterpret_cast<std::uint32_t*>(row + col);
    *p = accumulate ? *p ^ w : w;
    return;
  }
  for (std::size_t b = 0; col + b < len && b < 4; ++b) {
    const auto v = static_cast<std::uint8_t>(w >> (8 * b));
    row[col + b] = accumulate ? static_cast<std::uint8_t>(row[col + b] ^ v) : v;
  }
}

// log/exp of GF(2^8) mod 0x11D, arranged so a product needs no test for zero: log[0] is a sentinel
// that pushes any sum with it past the non-zero part of exp, which is doubled (510 entries) so that
// log a + log b needs no reduction.
struct LogExpTables {
  std::uint16_t log[256];
  std::uint8_t exp[1024];
};
inline constexpr std::uint16_t kLogZero = 511;  // 511 + 511 < 1024; 511 + 0 >= 510

constexpr LogExpTables make_log_exp_tables() {
  LogExpTables t{};
  std::uint32_t x = 1;
  for (int i = 0; i < 255; ++i) {
    t.exp[i] = t.exp[i + 255] = static_cast<std::uint8_t>(x);
    t.log[x] = static_cast<std::uint16_t>(i);
    x = xtime(x);
  }
  t.log[0] = kLogZero;
  return t;
}

}  // namespace ncast::gpu::detail
