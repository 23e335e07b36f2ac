// Generator matrices against ISA-L's Cauchy construction, an independent Vandermonde construction and
// a published vector; the small matrix algebra against slow per-byte math.
#include "coding/rs/generator.hpp"

#include <gtest/gtest.h>
#include <isa-l/erasure_code.h>

#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include "coding/rs/codec.hpp"
#include "coding/rs/matrix.hpp"
#include "tests/coding/rs/rs_reference.hpp"

namespace ncast::rs {
namespace {

using testing::slow_product;
using testing::SlowMatrix;

struct Code {
  std::size_t k, m;
};
const Code kCodes[] = {{1, 1}, {4, 2}, {10, 4}, {16, 4}, {32, 8}, {128, 32}, {200, 55}};

SlowMatrix to_slow(const Matrix& a) {
  SlowMatrix s(a.rows(), testing::Bytes(a.cols()));
  for (std::size_t r = 0; r < a.rows(); ++r)
    for (std::size_t c = 0; c < a.cols(); ++c) s[r][c] = a(r, c);
  return s;
}

TEST(Generator, CauchyEqualsIsalCauchy1) {
  for (Code c : kCodes) {
    const std::size_t n = c.k + c.m;
    std::vector<unsigned char> isal(n * c.k);
    gf_gen_cauchy1_matrix(isal.data(), static_cast<int>(n), static_cast<int>(c.k));
    const Matrix p = cauchy_parity(c.k, c.m);
    ASSERT_EQ(p.rows(), c.m);
    ASSERT_EQ(p.cols(), c.k);
    for (std::size_t i = 0; i < c.m; ++i)
      for (std::size_t j = 0; j < c.k; ++j)
        ASSERT_EQ(p(i, j), isal[(c.k + i) * c.k + j]) << c.k << "+" << c.m << " row " << i << " col " << j;
  }
}

TEST(Generator, VandermondeEqualsIndependentConstruction) {
  for (Code c : kCodes) {
    const SlowMatrix want = testing::slow_vandermonde_parity(c.k, c.m);
    ASSERT_EQ(to_slow(vandermonde_parity(c.k, c.m)), want) << c.k << "+" << c.m;
  }
}

TEST(Generator, VandermondeFirstParityRowOf10Plus4IsThePublishedOne) {
  // klauspost/reedsolomon default matrix, 10+4, first parity row (research/rs-anchors.md §1.3).
  const std::uint8_t published[] = {0x81, 0x96, 0xaf, 0xb8, 0xd2, 0xc4, 0xfe, 0xe8, 0x03, 0x02};
  const Matrix p = vandermonde_parity(10, 4);
  for (std::size_t j = 0; j < 10; ++j) EXPECT_EQ(p(0, j), published[j]) << "column " << j;
}

TEST(Generator, RejectsCodeSizesOutsideTheField) {
  EXPECT_THROW(cauchy_parity(0, 1), std::invalid_argument);
  EXPECT_THROW(cauchy_parity(1, 0), std::invalid_argument);
  EXPECT_THROW(vandermonde_parity(200, 57), std::invalid_argument);
  EXPECT_NO_THROW(vandermonde_parity(255, 1));
  EXPECT_NO_THROW(cauchy_parity(1, 255));
}

// Sizes whose sum wraps around to at most 256 (a manifest's "k": -1 read as a size_t, found by the
// rs_manifest fuzz target): k·m then wraps too, so a check on the sum alone let a small allocation be
// indexed as a huge matrix.
TEST(Generator, RejectsCodeSizesWhoseSumWraps) {
  const std::size_t max = std::numeric_limits<std::size_t>::max();
  EXPECT_THROW(check_code_size(max, 2), std::invalid_argument);
  EXPECT_THROW(check_code_size(2, max), std::invalid_argument);
  EXPECT_THROW(check_code_size(std::size_t{1} << 32, max - (std::size_t{1} << 32) + 2), std::invalid_argument);
  EXPECT_THROW(cauchy_parity(max, 2), std::invalid_argument);
  EXPECT_THROW(Codec(max, 2), std::invalid_argument);
  EXPECT_NO_THROW(check_code_size(128, 128));
  EXPECT_THROW(check_code_size(128, 129), std::invalid_argument);
}

TEST(Generator, MatrixKindNamesRoundTrip) {
  for (MatrixKind kind : {MatrixKind::cauchy, MatrixKind::vandermonde, MatrixKind::custom})
    EXPECT_EQ(parse_matrix_kind(to_string(kind)), kind);
  EXPECT_FALSE(parse_matrix_kind("reed-solomon"));
}

TEST(Matrix, InverseTimesMatrixIsIdentity) {
  std::mt19937_64 rng(7);
  for (std::size_t n : {1u, 2u, 3u, 7u, 32u, 100u, 128u, 255u}) {
    // A Cauchy matrix (always invertible) where one fits, and a random one (nearly always invertible).
    std::vector<Matrix> cases;
    if (2 * n <= 256) {
      Matrix cauchy(n, n);
      for (std::size_t r = 0; r < n; ++r)
        for (std::size_t c = 0; c < n; ++c) cauchy(r, c) = testing::slow_inv(static_cast<std::uint8_t>((r + n) ^ c));
      cases.push_back(cauchy);
    }
    Matrix random(n, n);
    for (std::size_t r = 0; r < n; ++r)
      for (std::size_t c = 0; c < n; ++c) random(r, c) = static_cast<std::uint8_t>(rng());
    cases.push_back(random);

    for (const Matrix& a : cases) {
      const auto inv = invert(a);
      ASSERT_EQ(inv.has_value(), testing::slow_invert(to_slow(a)).has_value()) << "n=" << n;
      if (cases.size() == 2 && &a == &cases[0]) {
        ASSERT_TRUE(inv.has_value()) << "Cauchy n=" << n;
      }
      if (!inv) continue;
      const SlowMatrix product = slow_product(to_slow(a), to_slow(*inv));
      for (std::size_t r = 0; r < n; ++r)
        for (std::size_t c = 0; c < n; ++c) ASSERT_EQ(product[r][c], r == c ? 1 : 0) << "n=" << n;
    }
  }
}

TEST(Matrix, SingularMatricesHaveNoInverse) {
  std::mt19937_64 rng(8);
  Matrix a(5, 5);
  for (std::size_t r = 0; r < 5; ++r)
    for (std::size_t c = 0; c < 5; ++c) a(r, c) = static_cast<std::uint8_t>(rng() | 1);
  // Row 3 = 7·row 1 ⊕ row 0 makes the rows dependent.
  for (std::size_t c = 0; c < 5; ++c) a(3, c) = testing::slow_mul(7, a(1, c)) ^ a(0, c);
  EXPECT_FALSE(invert(a).has_value());
  EXPECT_FALSE(invert(Matrix(4, 4)).has_value());
  EXPECT_THROW(invert(Matrix(3, 4)), std::invalid_argument);
}

TEST(Matrix, ProductMatchesSlowProduct) {
  std::mt19937_64 rng(9);
  Matrix a(6, 9), b(9, 4);
  for (std::size_t r = 0; r < 6; ++r)
    for (std::size_t c = 0; c < 9; ++c) a(r, c) = static_cast<std::uint8_t>(rng());
  for (std::size_t r = 0; r < 9; ++r)
    for (std::size_t c = 0; c < 4; ++c) b(r, c) = static_cast<std::uint8_t>(rng());
  EXPECT_EQ(to_slow(a * b), slow_product(to_slow(a), to_slow(b)));
  EXPECT_THROW(b * b, std::invalid_argument);
  EXPECT_THROW(Matrix(2, 2, std::vector<std::uint8_t>(3)), std::invalid_argument);
}

}  // namespace
}  // namespace ncast::rs
