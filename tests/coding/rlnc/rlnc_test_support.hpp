#pragma once
// Shared by the RLNC tests: random data, and slow independent references (per-byte field arithmetic
// from gf_reference.hpp, textbook Gaussian elimination) to check the codec against.
#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "tests/coding/gf_reference.hpp"

namespace ncast::rlnc::testing {

using ncast::testing::slow_mul;

inline std::vector<std::uint8_t> random_bytes(std::size_t count, std::mt19937_64& rng) {
  std::vector<std::uint8_t> out(count);
  for (auto& b : out) b = static_cast<std::uint8_t>(rng());
  return out;
}

// Σ_j coefs[j] · symbol j of block (n symbols of len bytes), one byte at a time.
inline std::vector<std::uint8_t> reference_combination(std::span<const std::uint8_t> coefs,
                                                       std::span<const std::uint8_t> block, std::size_t len) {
  std::vector<std::uint8_t> out(len, 0);
  for (std::size_t j = 0; j < coefs.size(); ++j)
    for (std::size_t i = 0; i < len; ++i) out[i] ^= slow_mul(coefs[j], block[j * len + i]);
  return out;
}

inline std::uint8_t slow_inv(std::uint8_t a) {
  for (unsigned x = 1; x < 256; ++x)
    if (slow_mul(a, static_cast<std::uint8_t>(x)) == 1) return static_cast<std::uint8_t>(x);
  return 0;
}

// Rank of a set of vectors by plain Gaussian elimination, one vector added at a time.
class ReferenceRank {
 public:
  explicit ReferenceRank(std::size_t n) : n_(n) {}
  // Adds v; true when it raised the rank.
  bool add(std::vector<std::uint8_t> v) {
    for (const auto& row : rows_) {
      const std::size_t p = lead(row);
      if (v[p] == 0) continue;
      const std::uint8_t f = slow_mul(v[p], slow_inv(row[p]));
      for (std::size_t j = 0; j < n_; ++j) v[j] ^= slow_mul(f, row[j]);
    }
    if (lead(v) == n_) return false;
    rows_.push_back(std::move(v));
    return true;
  }
  std::size_t rank() const { return rows_.size(); }

 private:
  std::size_t lead(const std::vector<std::uint8_t>& v) const {
    std::size_t p = 0;
    while (p < n_ && v[p] == 0) ++p;
    return p;
  }
  std::size_t n_;
  std::vector<std::vector<std::uint8_t>> rows_;
};

}  // namespace ncast::rlnc::testing
