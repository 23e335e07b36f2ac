#pragma once
// Scalar arithmetic in GF(2^8) with polynomial 0x11D and generator 2: the field of ISA-L,
// klauspost/reedsolomon, Jerasure, Kodo and RFC 5510/8681, so our symbols interoperate with theirs.
#include <array>
#include <cstdint>

namespace ncast::gf {

inline constexpr unsigned kPolynomial = 0x11D;

struct LogExpTables {
  // exp is doubled so that exp[log a + log b] needs no reduction modulo 255.
  std::array<std::uint8_t, 510> exp{};
  std::array<std::uint8_t, 256> log{};  // log[0] is unused
};

consteval LogExpTables make_log_exp_tables() {
  LogExpTables t;
  unsigned x = 1;
  for (unsigned i = 0; i < 255; ++i) {
    t.exp[i] = static_cast<std::uint8_t>(x);
    t.exp[i + 255] = static_cast<std::uint8_t>(x);
    t.log[x] = static_cast<std::uint8_t>(i);
    x <<= 1;
    if (x & 0x100) x ^= kPolynomial;
  }
  return t;
}

inline constexpr LogExpTables kLogExp = make_log_exp_tables();

constexpr std::uint8_t mul(std::uint8_t a, std::uint8_t b) {
  if (a == 0 || b == 0) return 0;
  return kLogExp.exp[kLogExp.log[a] + kLogExp.log[b]];
}

// Multiplicative inverse; a must be non-zero (throws std::domain_error otherwise).
std::uint8_t inv(std::uint8_t a);
// a / b; b must be non-zero (throws std::domain_error otherwise).
std::uint8_t div(std::uint8_t a, std::uint8_t b);
// a^e with 0^0 = 1, as the Vandermonde constructions of klauspost and Backblaze define it.
std::uint8_t pow(std::uint8_t a, unsigned e);

// Row c of the full 256×256 product table: mul_row(c)[x] == mul(c, x).
const std::uint8_t* mul_row(std::uint8_t c);

}  // namespace ncast::gf
