#include "coding/gf256.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

#include "tests/coding/gf_reference.hpp"

namespace ncast::gf {
namespace {

using testing::slow_mul;

TEST(Gf256, ProductsMatchShiftAndAddOverAllPairs) {
  for (unsigned a = 0; a < 256; ++a)
    for (unsigned b = 0; b < 256; ++b) {
      const auto x = static_cast<std::uint8_t>(a), y = static_cast<std::uint8_t>(b);
      ASSERT_EQ(mul(x, y), slow_mul(x, y)) << a << "*" << b;
      ASSERT_EQ(mul_row(x)[y], slow_mul(x, y)) << a << "*" << b;
    }
}

TEST(Gf256, PolynomialIs0x11D) {
  EXPECT_EQ(mul(0x80, 2), 0x1D);
  EXPECT_EQ(mul(2, 0x8E), 1);  // 2·0x8E = 0x11C ^ 0x11D
}

TEST(Gf256, FieldAxioms) {
  for (unsigned a = 0; a < 256; ++a) {
    const auto x = static_cast<std::uint8_t>(a);
    ASSERT_EQ(mul(x, 1), x);
    ASSERT_EQ(mul(x, 0), 0);
    if (x != 0) {
      ASSERT_EQ(mul(x, inv(x)), 1) << a;
    }
    for (unsigned b = 0; b < 256; ++b) {
      const auto y = static_cast<std::uint8_t>(b);
      ASSERT_EQ(mul(x, y), mul(y, x));
      if (y != 0) {
        ASSERT_EQ(mul(div(x, y), y), x) << a << "/" << b;
      }
      for (unsigned c = 0; c < 256; c += 17) {
        const auto z = static_cast<std::uint8_t>(c);
        ASSERT_EQ(mul(mul(x, y), z), mul(x, mul(y, z)));
        ASSERT_EQ(mul(x, static_cast<std::uint8_t>(y ^ z)), mul(x, y) ^ mul(x, z));
      }
    }
  }
}

TEST(Gf256, GeneratorTwoHasOrder255) {
  std::uint8_t x = 1;
  for (unsigned i = 1; i < 255; ++i) {
    x = mul(x, 2);
    ASSERT_NE(x, 1) << "order divides " << i;
  }
  EXPECT_EQ(mul(x, 2), 1);
}

TEST(Gf256, PowMatchesRepeatedMultiplication) {
  for (unsigned a = 0; a < 256; ++a) {
    std::uint8_t expected = 1;
    for (unsigned e = 0; e < 600; ++e) {
      ASSERT_EQ(pow(static_cast<std::uint8_t>(a), e), expected) << a << "^" << e;
      expected = slow_mul(expected, static_cast<std::uint8_t>(a));
    }
  }
}

TEST(Gf256, ZeroHasNoInverse) {
  EXPECT_THROW(inv(0), std::domain_error);
  EXPECT_THROW(div(5, 0), std::domain_error);
  EXPECT_EQ(div(0, 5), 0);
}

}  // namespace
}  // namespace ncast::gf
