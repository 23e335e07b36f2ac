// How many symbols a receiver needs, over many generations, against the theory for uniformly drawn
// non-zero vectors over GF(2^8): the i-th innovative symbol (i = 0..n-1) takes a geometric number of
// tries with success probability 1 - (q^i - 1)/(q^n - 1), so
//   E[extra] = Σ_i (q^i - 1) / (q^n - q^i),
// which for large n is 1/255 + 1/65280 + … ≈ 0.00394.
#include <gtest/gtest.h>

#include <cmath>

#include "coding/rlnc/decoder.hpp"

namespace ncast::rlnc {
namespace {

double expected_extra(std::size_t n) {
  const long double q = 256;
  long double sum = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const long double qi = std::pow(q, static_cast<long double>(i)), qn = std::pow(q, static_cast<long double>(n));
    sum += (qi - 1) / (qn - qi);
  }
  return static_cast<double>(sum);
}

// Extra symbols per generation, mean and variance, over `generations` seeded dense generations.
struct Extra {
  double mean, variance;
};
Extra measure(std::size_t n, std::size_t generations) {
  const GenerationLayout layout(n, 1, n);
  std::vector<std::uint8_t> out(n), payload(1, 0x5A);
  Decoder dec(layout, out, {coefficient_seed(42, 1), 0}, {.batch = kMaxSymbols});
  double sum = 0, sum2 = 0;
  for (std::size_t g = 0; g < generations; ++g) {
    // Each generation is its own segment, so its vectors are fresh draws of the generator.
    dec = Decoder(layout, out, {coefficient_seed(42, 1), static_cast<std::uint32_t>(g)}, {.batch = kMaxSymbols});
    std::uint32_t index = 0;
    while (!dec.complete()) dec.add({SymbolKind::coded, index++, {}, {}, payload});
    const double extra = static_cast<double>(dec.received() - n);
    sum += extra;
    sum2 += extra * extra;
  }
  const double mean = sum / static_cast<double>(generations);
  return {mean, sum2 / static_cast<double>(generations) - mean * mean};
}

TEST(Statistics, ExtraSymbolsMatchTheoryForDenseGf256) {
  // 10,000 generations of n = 128. The extra count per generation is 0 or (rarely) 1, so its variance
  // is ≈ its mean and the standard error of the mean is ≈ √(0.0039 / 10000) ≈ 0.00063; the test allows
  // four of them (±0.0025) around the theory.
  const double theory = expected_extra(128);
  EXPECT_NEAR(theory, 1.0 / 255 + 1.0 / 65280, 1e-7);
  const Extra got = measure(128, 10000);
  EXPECT_NEAR(got.mean, theory, 0.0025) << "mean extra " << got.mean << " vs theory " << theory;
  EXPECT_NEAR(got.variance, theory, 0.0025) << "variance " << got.variance;
}

TEST(Statistics, SmallGenerations) {
  // n = 1: a seeded vector is never zero, so one symbol always suffices.
  EXPECT_EQ(measure(1, 2000).mean, 0.0);
  // n = 2: theory 255/65280 ≈ 0.0039; 20,000 generations give a standard error ≈ 0.00044.
  EXPECT_NEAR(measure(2, 20000).mean, expected_extra(2), 0.0018);
}

}  // namespace
}  // namespace ncast::rlnc
