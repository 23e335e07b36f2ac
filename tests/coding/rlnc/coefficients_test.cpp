// Seeded coefficients: the generator against the known-answer file and against a transcription of
// docs/coefficients.md written directly on the Philox block function; then the properties the
// codec relies on (never zero, density honoured, servers independent).
#include "coding/rlnc/coefficients.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <random>
#include <set>
#include <vector>

#include "coding/rlnc/error.hpp"
#include "coding/rlnc/philox.hpp"
#include "tests/coding/rlnc/kat_file.hpp"

namespace ncast::rlnc {
namespace {

// docs/coefficients.md, section 2, with value t of the stream computed as Philox4x32-10 of block t/4.
std::vector<std::uint8_t> documented_coefficients(std::uint32_t server, std::uint32_t stream, std::uint32_t segment,
                                                  std::uint32_t index, std::size_t n, std::uint32_t threshold) {
  auto value = [&](std::size_t t) {
    const PhiloxCounter ctr{static_cast<std::uint32_t>(t / 4), 0, index, segment};
    return philox4x32_10(ctr, {stream, server})[t % 4];
  };
  auto nonzero = [](std::uint32_t v) { return static_cast<std::uint8_t>(1 + (((v >> 16) * 255) >> 16)); };
  std::vector<std::uint8_t> c(n, 0);
  if (threshold == 65536) {
    for (std::size_t j = 0; j < n; ++j) c[j] = static_cast<std::uint8_t>(value(j / 4) >> (8 * (j % 4)));
    if (std::all_of(c.begin(), c.end(), [](auto x) { return x == 0; })) c[0] = 1;
    return c;
  }
  bool any = false;
  for (std::size_t j = 0; j < n; ++j)
    if ((value(j) & 0xFFFF) < threshold) {
      c[j] = nonzero(value(j));
      any = true;
    }
  if (!any) {
    const std::size_t p = ((value(n) & 0xFFFF) * n) >> 16;
    c[p] = nonzero(value(p));
  }
  return c;
}

std::vector<std::uint8_t> draw(std::uint32_t server, std::uint32_t stream, std::uint32_t segment, std::uint32_t index,
                               std::size_t n, Density density) {
  std::vector<std::uint8_t> c(n, 0xEE);
  draw_coefficients({coefficient_seed(server, stream), segment}, index, density, c);
  return c;
}

TEST(Coefficients, KnownAnswerFile) {
  const auto kat = testing::read_project_kat();
  ASSERT_GE(kat.coefficients.size(), 30u);
  for (const auto& c : kat.coefficients)
    EXPECT_EQ(draw(c.server, c.stream, c.segment, c.index, c.n, Density::from_threshold(c.threshold)), c.coefficients)
        << c.server << " " << c.stream << " " << c.segment << " " << c.index << " n=" << c.n << " t=" << c.threshold;
}

TEST(Coefficients, FollowTheDocumentedMapping) {
  std::mt19937_64 rng(3);
  const std::uint32_t thresholds[] = {65536, 65535, 40000, 6554, 100, 1};
  for (int trial = 0; trial < 300; ++trial) {
    const auto server = static_cast<std::uint32_t>(rng()), stream = static_cast<std::uint32_t>(rng());
    const auto segment = static_cast<std::uint32_t>(rng()), index = static_cast<std::uint32_t>(rng());
    const std::size_t n = 1 + rng() % 256;
    const std::uint32_t t = thresholds[trial % 6];
    ASSERT_EQ(draw(server, stream, segment, index, n, Density::from_threshold(t)),
              documented_coefficients(server, stream, segment, index, n, t))
        << "n=" << n << " t=" << t;
  }
}

TEST(Coefficients, NeverAllZero) {
  for (std::uint32_t t : {65536u, 1000u, 1u})
    for (std::uint32_t index = 0; index < 3000; ++index)
      for (std::size_t n : {1u, 2u, 5u}) {
        const auto c = draw(9, 9, 9, index, n, Density::from_threshold(t));
        ASSERT_TRUE(std::any_of(c.begin(), c.end(), [](auto x) { return x != 0; })) << "index " << index;
      }
}

TEST(Coefficients, SparseDensityIsHonoured) {
  // 4000 vectors of 64: the non-zero fraction is within 5 standard deviations of the density.
  for (double d : {0.05, 0.25, 0.5}) {
    const auto density = Density::from_fraction(d);
    std::size_t nonzero = 0, total = 0;
    std::array<std::size_t, 256> histogram{};
    for (std::uint32_t index = 0; index < 4000; ++index)
      for (const auto x : draw(1, 2, 3, index, 64, density)) {
        nonzero += x != 0;
        ++histogram[x];
        ++total;
      }
    const double expected = density.fraction() * static_cast<double>(total);
    EXPECT_NEAR(static_cast<double>(nonzero), expected, 5 * std::sqrt(expected * (1 - density.fraction()))) << d;
    // Every non-zero value occurs (about nonzero/255 times each).
    for (int v = 1; v < 256; ++v) EXPECT_GT(histogram[v], 0u) << "value " << v << " density " << d;
  }
}

TEST(Coefficients, DenseBytesAreUniform) {
  std::array<std::size_t, 256> histogram{};
  for (std::uint32_t index = 0; index < 2000; ++index)
    for (const auto x : draw(1, 2, 3, index, 128, Density::dense())) ++histogram[x];
  // Chi-square with 255 degrees of freedom: mean 255, sd ≈ 22.6; 400 is beyond six sd.
  const double expected = 2000.0 * 128 / 256;
  double chi2 = 0;
  for (const auto h : histogram) chi2 += (h - expected) * (h - expected) / expected;
  EXPECT_LT(chi2, 400.0);
}

TEST(Coefficients, EveryInputSelectsADifferentVector) {
  std::set<std::vector<std::uint8_t>> seen;
  for (std::uint32_t server = 0; server < 4; ++server)
    for (std::uint32_t stream = 0; stream < 4; ++stream)
      for (std::uint32_t segment = 0; segment < 4; ++segment)
        for (std::uint32_t index = 0; index < 16; ++index)
          ASSERT_TRUE(seen.insert(draw(server, stream, segment, index, 16, Density::dense())).second)
              << server << " " << stream << " " << segment << " " << index;
  // The seed and subsequence pack their halves without overlap.
  EXPECT_EQ(coefficient_seed(0x12345678, 0x9abcdef0), 0x123456789abcdef0ull);
  EXPECT_EQ(coefficient_subsequence(0xffffffff, 1), 0xffffffff00000001ull);
}

TEST(Density, FractionsAndThresholds) {
  EXPECT_TRUE(Density().is_dense());
  EXPECT_TRUE(Density::from_fraction(1.0).is_dense());
  EXPECT_EQ(Density::from_fraction(0.5).threshold(), 32768u);
  EXPECT_EQ(Density::from_fraction(1e-9).threshold(), 1u);
  EXPECT_EQ(Density::from_threshold(1).threshold(), 1u);
  for (double bad : {0.0, -0.5, 1.5, std::nan("")}) EXPECT_THROW(Density::from_fraction(bad), Error) << bad;
  EXPECT_THROW(Density::from_threshold(0), Error);
  EXPECT_THROW(Density::from_threshold(65537), Error);
  std::vector<std::uint8_t> none;
  EXPECT_THROW(draw_coefficients({}, 0, Density::dense(), none), Error);
  std::vector<std::uint8_t> too_long(257);
  EXPECT_THROW(draw_coefficients({}, 0, Density::dense(), too_long), Error);
}

}  // namespace
}  // namespace ncast::rlnc
