#pragma once
// Generator matrices of systematic Reed–Solomon codes: shard i < k is data shard i, shard k + p is
// parity row p applied to the data. The constructions match the libraries whose shards we must read
// and write byte for byte.
#include <cstddef>
#include <optional>
#include <string_view>

#include "coding/rs/matrix.hpp"

namespace ncast::rs {

enum class MatrixKind {
  // Parity row i (k ≤ i < k+m), column j: 1 / (i XOR j). ISA-L gf_gen_cauchy1_matrix, klauspost
  // WithCauchyMatrix; MDS for every k + m ≤ 256.
  cauchy,
  // V[r][c] = r^c for r < k+m, times the inverse of its top k × k block (klauspost and Backblaze
  // default, Gibraltar); MDS for every k + m ≤ 256.
  vandermonde,
  // Parity rows given by the user; reconstruction fails with Unrecoverable for erasure patterns on
  // which they are not invertible.
  custom,
};

std::string_view to_string(MatrixKind kind);
// Accepts "cauchy", "vandermonde" and "custom".
std::optional<MatrixKind> parse_matrix_kind(std::string_view name);

// The m × k parity rows; k ≥ 1, m ≥ 1, k + m ≤ 256 (std::invalid_argument otherwise).
Matrix cauchy_parity(std::size_t k, std::size_t m);
Matrix vandermonde_parity(std::size_t k, std::size_t m);

// Throws std::invalid_argument naming the problem unless 1 ≤ k, 1 ≤ m and k + m ≤ 256.
void check_code_size(std::size_t k, std::size_t m);

}  // namespace ncast::rs
