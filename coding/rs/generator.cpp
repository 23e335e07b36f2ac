#include "coding/rs/generator.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "coding/gf256.hpp"

namespace ncast::rs {

std::string_view to_string(MatrixKind kind) {
  switch (kind) {
    case MatrixKind::cauchy: return "cauchy";
    case MatrixKind::vandermonde: return "vandermonde";
    case MatrixKind::custom: return "custom";
  }
  return "unknown";
}

std::optional<MatrixKind> parse_matrix_kind(std::string_view name) {
  for (MatrixKind kind : {MatrixKind::cauchy, MatrixKind::vandermonde, MatrixKind::custom})
    if (name == to_string(kind)) return kind;
  return std::nullopt;
}

void check_code_size(std::size_t k, std::size_t m) {
  if (k < 1 || m < 1 || k > 256 || m > 256 || k + m > 256)  // (each bounded first: the sum may wrap)
    throw std::invalid_argument("Reed-Solomon code " + std::to_string(k) + "+" + std::to_string(m) +
                                ": need k >= 1, m >= 1 and k + m <= 256 (GF(2^8) has 256 evaluation points)");
}

Matrix cauchy_parity(std::size_t k, std::size_t m) {
  check_code_size(k, m);
  Matrix p(m, k);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < k; ++j) p(i, j) = gf::inv(static_cast<std::uint8_t>((k + i) ^ j));
  return p;
}

Matrix vandermonde_parity(std::size_t k, std::size_t m) {
  check_code_size(k, m);
  Matrix v(k + m, k);
  for (std::size_t r = 0; r < k + m; ++r)
    for (std::size_t c = 0; c < k; ++c) v(r, c) = gf::pow(static_cast<std::uint8_t>(r), static_cast<unsigned>(c));
  Matrix top(k, k);
  for (std::size_t r = 0; r < k; ++r) std::copy_n(v.row(r), k, top.row(r));
  // Distinct evaluation points make every k rows of V independent, so the top block is invertible.
  const Matrix systematic = v * *invert(top);
  Matrix p(m, k);
  for (std::size_t i = 0; i < m; ++i) std::copy_n(systematic.row(k + i), k, p.row(i));
  return p;
}

}  // namespace ncast::rs
