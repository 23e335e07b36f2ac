#pragma once
// Slow, independent Reed–Solomon math for the tests: per-byte shift-and-add products, a brute-force
// inverse and a textbook Gauss–Jordan elimination. Shares no code with coding/rs.
#include <cstdint>
#include <optional>
#include <random>
#include <stdexcept>
#include <vector>

#include "tests/coding/gf_reference.hpp"

namespace ncast::testing {

using Bytes = std::vector<std::uint8_t>;
// Row-major square or rectangular matrix as rows of bytes.
using SlowMatrix = std::vector<Bytes>;

inline std::uint8_t slow_inv(std::uint8_t a) {
  for (unsigned b = 1; b < 256; ++b)
    if (slow_mul(a, static_cast<std::uint8_t>(b)) == 1) return static_cast<std::uint8_t>(b);
  throw std::domain_error("slow_inv(0)");
}

inline std::uint8_t slow_pow(std::uint8_t a, unsigned e) {
  std::uint8_t r = 1;
  while (e--) r = slow_mul(r, a);
  return r;
}

inline SlowMatrix slow_product(const SlowMatrix& a, const SlowMatrix& b) {
  SlowMatrix p(a.size(), Bytes(b.at(0).size(), 0));
  for (std::size_t r = 0; r < a.size(); ++r)
    for (std::size_t c = 0; c < b[0].size(); ++c)
      for (std::size_t j = 0; j < b.size(); ++j) p[r][c] ^= slow_mul(a[r][j], b[j][c]);
  return p;
}

inline std::optional<SlowMatrix> slow_invert(SlowMatrix a) {
  const std::size_t n = a.size();
  SlowMatrix inv(n, Bytes(n, 0));
  for (std::size_t i = 0; i < n; ++i) inv[i][i] = 1;
  for (std::size_t col = 0; col < n; ++col) {
    std::size_t piv = col;
    while (piv < n && a[piv][col] == 0) ++piv;
    if (piv == n) return std::nullopt;
    std::swap(a[piv], a[col]);
    std::swap(inv[piv], inv[col]);
    const std::uint8_t s = slow_inv(a[col][col]);
    for (std::size_t c = 0; c < n; ++c) {
      a[col][c] = slow_mul(a[col][c], s);
      inv[col][c] = slow_mul(inv[col][c], s);
    }
    for (std::size_t r = 0; r < n; ++r) {
      if (r == col || a[r][col] == 0) continue;
      const std::uint8_t f = a[r][col];
      for (std::size_t c = 0; c < n; ++c) {
        a[r][c] ^= slow_mul(f, a[col][c]);
        inv[r][c] ^= slow_mul(f, inv[col][c]);
      }
    }
  }
  return inv;
}

// klauspost/Backblaze: V[r][c] = r^c over r < k+m, times inv(top k×k); returns the m parity rows.
inline SlowMatrix slow_vandermonde_parity(std::size_t k, std::size_t m) {
  SlowMatrix v(k + m, Bytes(k));
  for (std::size_t r = 0; r < k + m; ++r)
    for (std::size_t c = 0; c < k; ++c) v[r][c] = slow_pow(static_cast<std::uint8_t>(r), static_cast<unsigned>(c));
  const SlowMatrix top(v.begin(), v.begin() + static_cast<long>(k));
  const SlowMatrix parity_v(v.begin() + static_cast<long>(k), v.end());
  return slow_product(parity_v, *slow_invert(top));
}

// parity[p][i] = Σ_j rows[p][j] · data[j][i], byte by byte.
inline std::vector<Bytes> slow_encode(const SlowMatrix& rows, const std::vector<Bytes>& data) {
  std::vector<Bytes> parity(rows.size(), Bytes(data.at(0).size(), 0));
  for (std::size_t p = 0; p < rows.size(); ++p)
    for (std::size_t j = 0; j < data.size(); ++j)
      for (std::size_t i = 0; i < data[j].size(); ++i) parity[p][i] ^= slow_mul(rows[p][j], data[j][i]);
  return parity;
}

inline Bytes random_bytes(std::size_t n, std::mt19937_64& rng) {
  Bytes b(n);
  for (auto& x : b) x = static_cast<std::uint8_t>(rng());
  return b;
}

// Overwrites b in place (its buffer, and pointers into it, stay the same).
inline void fill_random(Bytes& b, std::mt19937_64& rng) {
  for (auto& x : b) x = static_cast<std::uint8_t>(rng());
}

}  // namespace ncast::testing
