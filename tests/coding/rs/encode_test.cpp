// Parity byte-identical to ISA-L (Cauchy) and to an independent per-byte encoder (Vandermonde, custom),
// at every SIMD level.
#include <gtest/gtest.h>
#include <isa-l/erasure_code.h>

#include <random>
#include <stdexcept>
#include <vector>

#include "coding/rs/codec.hpp"
#include "tests/coding/rs/rs_test_support.hpp"

namespace ncast::rs {
namespace {

using testing::Bytes;
using testing::TestStripe;

struct Code {
  std::size_t k, m;
};
const Code kCodes[] = {{1, 1}, {4, 2}, {10, 4}, {16, 4}, {32, 8}, {128, 32}, {200, 55}};

std::vector<Bytes> isal_cauchy_parity(std::size_t k, std::size_t m, const TestStripe& s, std::size_t len) {
  const int n = static_cast<int>(k + m), ki = static_cast<int>(k), mi = static_cast<int>(m);
  std::vector<unsigned char> a(static_cast<std::size_t>(n) * k), tables(32 * k * m);
  gf_gen_cauchy1_matrix(a.data(), n, ki);
  ec_init_tables(ki, mi, a.data() + k * k, tables.data());
  std::vector<Bytes> parity(m, Bytes(len));
  std::vector<unsigned char*> in, out;
  for (std::size_t j = 0; j < k; ++j) in.push_back(const_cast<unsigned char*>(s.shards[j].data()));
  for (auto& p : parity) out.push_back(p.data());
  ec_encode_data(static_cast<int>(len), ki, mi, tables.data(), in.data(), out.data());
  return parity;
}

TEST(RsEncode, CauchyParityIsByteIdenticalToIsal) {
  std::mt19937_64 rng(11);
  for (Code c : kCodes)
    for (std::size_t len : {std::size_t{1}, 1000 + c.k}) {
      TestStripe stripe(c.k, c.m, len, rng);
      const auto want = isal_cauchy_parity(c.k, c.m, stripe, len);
      for (const auto& engine : testing::cpu_engines()) {
        Codec codec(c.k, c.m, {}, engine);
        for (std::size_t p = 0; p < c.m; ++p) stripe.shards[c.k + p] = testing::random_bytes(len, rng);
        auto ptrs = stripe.pointers();
        codec.encode(ptrs, len);
        for (std::size_t p = 0; p < c.m; ++p)
          ASSERT_EQ(stripe.shards[c.k + p], want[p])
              << engine->description() << " " << c.k << "+" << c.m << " len " << len << " parity " << p;
      }
    }
}

TEST(RsEncode, VandermondeParityEqualsIndependentEncoder) {
  std::mt19937_64 rng(12);
  for (Code c : kCodes) {
    const std::size_t len = 257 + c.m;
    TestStripe stripe(c.k, c.m, len, rng);
    const std::vector<Bytes> data(stripe.shards.begin(), stripe.shards.begin() + static_cast<long>(c.k));
    const auto want = testing::slow_encode(testing::slow_vandermonde_parity(c.k, c.m), data);
    for (const auto& engine : testing::cpu_engines()) {
      Codec codec(c.k, c.m, {.matrix = MatrixKind::vandermonde}, engine);
      for (std::size_t p = 0; p < c.m; ++p) stripe.shards[c.k + p] = testing::random_bytes(len, rng);
      std::vector<std::uint8_t*> parity;
      for (std::size_t p = 0; p < c.m; ++p) parity.push_back(stripe.shards[c.k + p].data());
      codec.encode(stripe.data_pointers(c.k), parity, len);
      for (std::size_t p = 0; p < c.m; ++p)
        ASSERT_EQ(stripe.shards[c.k + p], want[p]) << engine->description() << " " << c.k << "+" << c.m;
    }
  }
}

TEST(RsEncode, CustomMatrixParityEqualsIndependentEncoder) {
  std::mt19937_64 rng(13);
  const std::size_t k = 7, m = 5, len = 333;
  testing::SlowMatrix rows(m, Bytes(k));
  Matrix custom(m, k);
  for (std::size_t p = 0; p < m; ++p)
    for (std::size_t j = 0; j < k; ++j) custom(p, j) = rows[p][j] = static_cast<std::uint8_t>(rng());
  TestStripe stripe(k, m, len, rng);
  const std::vector<Bytes> data(stripe.shards.begin(), stripe.shards.begin() + k);
  const auto want = testing::slow_encode(rows, data);
  Codec codec(k, m, {.matrix = MatrixKind::custom, .custom_parity = custom});
  EXPECT_EQ(codec.parity_matrix(), custom);
  auto ptrs = stripe.pointers();
  codec.encode(ptrs, len);
  for (std::size_t p = 0; p < m; ++p) EXPECT_EQ(stripe.shards[k + p], want[p]);
}

TEST(RsEncode, RejectsBadArguments) {
  EXPECT_THROW(Codec(0, 2), std::invalid_argument);
  EXPECT_THROW(Codec(250, 7), std::invalid_argument);
  EXPECT_THROW(Codec(3, 2, {.matrix = MatrixKind::custom, .custom_parity = Matrix(3, 2)}), std::invalid_argument);

  std::mt19937_64 rng(14);
  Codec codec(3, 2);
  TestStripe stripe(3, 2, 64, rng);
  auto ptrs = stripe.pointers();
  EXPECT_THROW(codec.encode(std::span(ptrs).first(4), 64), std::invalid_argument);
  ptrs[4] = nullptr;
  EXPECT_THROW(codec.encode(ptrs, 64), std::invalid_argument);
}

TEST(RsEncode, ZeroLengthTouchesNothing) {
  std::mt19937_64 rng(15);
  Codec codec(4, 2);
  TestStripe stripe(4, 2, 16, rng);
  const auto before = stripe.shards;
  auto ptrs = stripe.pointers();
  codec.encode(ptrs, 0);
  EXPECT_EQ(stripe.shards, before);
}

}  // namespace
}  // namespace ncast::rs
