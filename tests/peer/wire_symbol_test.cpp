// The wire kinds as codec symbols: a source symbol with its unit row (a zero row past n_s, which the
// decoder refuses), a seeded one with the coefficients its server's seed gives, explicit and recoded
// ones with the coefficients they carry.
#include "peer/wire_symbol.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "coding/rlnc/coefficients.hpp"

namespace ncast::peer {
namespace {

constexpr std::size_t kN = 5;

struct Wire {
  std::vector<std::uint8_t> coefficients{1, 2, 3, 4, 5}, payload{9, 8, 7},
      scratch = std::vector<std::uint8_t>(256, 0xAA);
  proto::CodedView view(proto::WireKind kind, std::uint32_t index, std::uint16_t density = proto::kDenseWire) {
    const bool carried = kind == proto::WireKind::explicit_coded || kind == proto::WireKind::recoded;
    return {{3, kind, density, index},
            carried ? std::span<const std::uint8_t>(coefficients) : std::span<const std::uint8_t>(),
            payload};
  }
};

std::vector<std::uint8_t> row(std::span<const std::uint8_t> s) { return {s.begin(), s.end()}; }

TEST(WireSymbol, SourceSymbolsGetTheirUnitRow) {
  Wire w;
  const auto s = codec_symbol(w.view(proto::WireKind::systematic, 2), 1, 10, kN, w.scratch);
  EXPECT_EQ(s.view.kind, rlnc::SymbolKind::systematic);
  EXPECT_EQ(s.view.index, 2u);
  EXPECT_TRUE(s.view.coefficients.empty());
  EXPECT_EQ(s.view.payload.data(), w.payload.data());
  EXPECT_EQ(row(s.coefficients), (std::vector<std::uint8_t>{0, 0, 1, 0, 0}));
  const auto past = codec_symbol(w.view(proto::WireKind::systematic, 7), 1, 10, kN, w.scratch);
  EXPECT_EQ(row(past.coefficients), std::vector<std::uint8_t>(kN, 0));
}

TEST(WireSymbol, SeededSymbolsDrawFromTheirServersSeed) {
  Wire w;
  const std::uint16_t half = 0x7FFF;  // threshold − 1 on the wire
  const auto s = codec_symbol(w.view(proto::WireKind::seeded, 40, half), 6, 10, kN, w.scratch);
  std::vector<std::uint8_t> expected(kN);
  rlnc::draw_coefficients({rlnc::coefficient_seed(6, 10), 3}, 40, rlnc::Density::from_threshold(0x8000), expected);
  EXPECT_EQ(s.view.kind, rlnc::SymbolKind::coded);
  EXPECT_EQ(row(s.view.coefficients), expected);
  EXPECT_EQ(row(s.coefficients), expected);
  // Another server's symbol of the same index is another row.
  const auto other = codec_symbol(w.view(proto::WireKind::seeded, 40, half), 7, 10, kN, w.scratch);
  EXPECT_NE(row(other.coefficients), expected);
}

TEST(WireSymbol, ExplicitAndRecodedCarryTheirCoefficients) {
  Wire w;
  const auto coded = codec_symbol(w.view(proto::WireKind::explicit_coded, 0), 1, 10, kN, w.scratch);
  EXPECT_EQ(coded.view.kind, rlnc::SymbolKind::coded);
  EXPECT_EQ(coded.view.coefficients.data(), w.coefficients.data());
  EXPECT_EQ(coded.coefficients.data(), w.coefficients.data());
  const auto recoded = codec_symbol(w.view(proto::WireKind::recoded, 0), 1, 10, kN, w.scratch);
  EXPECT_EQ(recoded.view.kind, rlnc::SymbolKind::recoded);
  EXPECT_EQ(recoded.coefficients.data(), w.coefficients.data());
}

}  // namespace
}  // namespace ncast::peer
