// The encoder against per-byte references: every payload is the combination its coefficients say.
#include "coding/rlnc/encoder.hpp"

#include <gtest/gtest.h>

#include <random>

#include "coding/rlnc/error.hpp"
#include "tests/coding/rlnc/rlnc_test_support.hpp"

namespace ncast::rlnc {
namespace {

using testing::random_bytes;
using testing::reference_combination;

struct Source {
  Source(std::size_t n, std::size_t len, std::uint64_t seed) : rng(seed), layout(n, len, n * len - len / 2) {
    block = std::make_unique<SourceBlock>(layout, random_bytes(layout.data_bytes(), rng));
  }
  std::mt19937_64 rng;
  GenerationLayout layout;
  std::unique_ptr<SourceBlock> block;
};

const SeedContext kSeeds{coefficient_seed(7, 3), 11};

TEST(Encoder, IdsAndKinds) {
  Source s(4, 8, 1);
  const Encoder systematic(*s.block, kSeeds);
  EXPECT_EQ(systematic.kind_of(0), SymbolKind::systematic);
  EXPECT_EQ(systematic.kind_of(3), SymbolKind::systematic);
  EXPECT_EQ(systematic.kind_of(4), SymbolKind::coded);
  const Encoder plain(*s.block, kSeeds, {.systematic = false});
  EXPECT_EQ(plain.kind_of(0), SymbolKind::coded);
}

TEST(Encoder, BatchPayloadsAreTheirCombinations) {
  for (const auto& [n, len] :
       {std::pair<std::size_t, std::size_t>{1, 1}, {2, 17}, {16, 1200}, {37, 333}, {128, 4096}}) {
    for (const bool systematic : {true, false})
      for (const double density : {1.0, 0.3, 0.02}) {
        Source s(n, len, n * 31 + len);
        const Encoder enc(*s.block, kSeeds, {.systematic = systematic, .density = Density::from_fraction(density)});
        const std::uint32_t first = systematic ? static_cast<std::uint32_t>(n > 2 ? n - 2 : 0) : 5;
        const std::size_t count = 9;
        std::vector<std::vector<std::uint8_t>> payloads(count, std::vector<std::uint8_t>(len, 0xA5));
        std::vector<std::uint8_t*> outs;
        for (auto& p : payloads) outs.push_back(p.data());
        std::vector<std::uint8_t> coefs(count * n, 0xA5);
        enc.produce(first, count, outs.data(), coefs.data());
        for (std::size_t i = 0; i < count; ++i) {
          const std::span<const std::uint8_t> c(coefs.data() + i * n, n);
          std::vector<std::uint8_t> expected_coefs(n, 0);
          if (enc.kind_of(first + static_cast<std::uint32_t>(i)) == SymbolKind::systematic)
            expected_coefs[first + i] = 1;
          else draw_coefficients(kSeeds, first + static_cast<std::uint32_t>(i), enc.options().density, expected_coefs);
          ASSERT_TRUE(std::equal(c.begin(), c.end(), expected_coefs.begin())) << "coefficients of symbol " << i;
          ASSERT_EQ(payloads[i], reference_combination(c, s.block->bytes(), len))
              << "n=" << n << " len=" << len << " density=" << density << " symbol " << i;
        }
      }
  }
}

TEST(Encoder, SingleSymbolsMatchTheBatchAndCarryTheirForm) {
  Source s(16, 100, 2);
  const Encoder seeded(*s.block, kSeeds);
  const Encoder explicit_form(*s.block, kSeeds, {.form = CoefficientForm::explicit_vector});
  std::vector<std::vector<std::uint8_t>> payloads(24, std::vector<std::uint8_t>(100));
  std::vector<std::uint8_t*> outs;
  for (auto& p : payloads) outs.push_back(p.data());
  seeded.produce(0, 24, outs.data());
  for (std::uint32_t id = 0; id < 24; ++id) {
    const CodedSymbol a = seeded.produce(id), b = explicit_form.produce(id);
    EXPECT_EQ(a.payload, payloads[id]);
    EXPECT_EQ(b.payload, payloads[id]);
    EXPECT_EQ(a.index, id);
    EXPECT_TRUE(a.coefficients.empty());
    if (id < 16) {
      EXPECT_EQ(a.kind, SymbolKind::systematic);
      EXPECT_TRUE(b.coefficients.empty());
    } else {
      EXPECT_EQ(a.kind, SymbolKind::coded);
      EXPECT_TRUE(a.view().seeded());
      EXPECT_EQ(b.coefficients.size(), 16u);
      EXPECT_FALSE(b.view().seeded());
    }
  }
}

TEST(Encoder, CombineWithCallerCoefficients) {
  Source s(10, 64, 3);
  const Encoder enc(*s.block, kSeeds);
  const auto coefs = random_bytes(3 * 10, s.rng);
  std::vector<std::vector<std::uint8_t>> payloads(3, std::vector<std::uint8_t>(64, 0x5A));
  std::vector<std::uint8_t*> outs{payloads[0].data(), payloads[1].data(), payloads[2].data()};
  enc.combine(coefs, outs.data(), 3);
  for (std::size_t i = 0; i < 3; ++i)
    EXPECT_EQ(payloads[i], reference_combination(std::span(coefs).subspan(i * 10, 10), s.block->bytes(), 64));
  EXPECT_THROW(enc.combine(std::span(coefs).first(29), outs.data(), 3), Error);
}

TEST(Encoder, RejectsAWrongBlock) {
  const GenerationLayout layout(4, 10, 40);
  std::vector<std::uint8_t> short_block(39);
  EXPECT_THROW(Encoder(layout, short_block, kSeeds), Error);
}

}  // namespace
}  // namespace ncast::rlnc
