// Corrupt symbols are rejected with the right error and leave the decoder exactly as it was.
#include <gtest/gtest.h>

#include <random>

#include "coding/rlnc/decoder.hpp"
#include "coding/rlnc/encoder.hpp"
#include "coding/rlnc/error.hpp"
#include "tests/coding/rlnc/rlnc_test_support.hpp"

namespace ncast::rlnc {
namespace {

const SeedContext kSeeds{coefficient_seed(2, 2), 2};

Errc rejection(Decoder& dec, const SymbolView& s) {
  try {
    dec.add(s);
  } catch (const Error& e) {
    return e.code();
  }
  ADD_FAILURE() << "accepted a corrupt symbol";
  return Errc::bad_kind;
}

TEST(CorruptInput, RejectedWithoutChangingAnything) {
  std::mt19937_64 rng(1);
  const GenerationLayout layout(16, 64, 16 * 64);
  const auto data = testing::random_bytes(layout.data_bytes(), rng);
  const SourceBlock block(layout, data);
  const Encoder enc(block, kSeeds, {.systematic = false});
  std::vector<std::uint8_t> out(layout.block_bytes());
  Decoder dec(layout, out, kSeeds, {.batch = 4});
  for (std::uint32_t id = 0; id < 6; ++id) dec.add(enc.produce(id).view());
  const std::vector<std::uint8_t> snapshot = out;

  const CodedSymbol good = enc.produce(6);
  const std::vector<std::uint8_t> coefs17(17, 1), coefs15(15, 1), zeros(16, 0), ones(16, 1);
  const std::vector<std::uint8_t> long_payload(65, 1), short_payload(63, 1), empty;
  EXPECT_EQ(rejection(dec, {SymbolKind::coded, 6, {}, {}, long_payload}), Errc::wrong_payload_length);
  EXPECT_EQ(rejection(dec, {SymbolKind::coded, 6, {}, {}, short_payload}), Errc::wrong_payload_length);
  EXPECT_EQ(rejection(dec, {SymbolKind::coded, 6, {}, {}, empty}), Errc::wrong_payload_length);
  EXPECT_EQ(rejection(dec, {SymbolKind::coded, 6, {}, coefs17, good.payload}), Errc::wrong_coefficient_count);
  EXPECT_EQ(rejection(dec, {SymbolKind::recoded, 6, {}, coefs15, good.payload}), Errc::wrong_coefficient_count);
  EXPECT_EQ(rejection(dec, {SymbolKind::coded, 6, {}, zeros, good.payload}), Errc::zero_coefficients);
  EXPECT_EQ(rejection(dec, {SymbolKind::recoded, 6, {}, zeros, good.payload}), Errc::zero_coefficients);
  EXPECT_EQ(rejection(dec, {SymbolKind::recoded, 6, {}, {}, good.payload}), Errc::bad_kind);
  EXPECT_EQ(rejection(dec, {SymbolKind::systematic, 16, {}, {}, good.payload}), Errc::index_out_of_range);
  EXPECT_EQ(rejection(dec, {SymbolKind::systematic, 0xFFFFFFFF, {}, {}, good.payload}), Errc::index_out_of_range);
  EXPECT_EQ(rejection(dec, {SymbolKind::systematic, 1, {}, ones, good.payload}), Errc::bad_kind);
  EXPECT_EQ(rejection(dec, {static_cast<SymbolKind>(9), 1, {}, ones, good.payload}), Errc::bad_kind);

  EXPECT_EQ(dec.rank(), 6u);
  EXPECT_EQ(dec.received(), 6u);
  EXPECT_EQ(out, snapshot);
  for (std::uint32_t id = 6; !dec.complete(); ++id) dec.add(enc.produce(id).view());
  EXPECT_TRUE(std::equal(data.begin(), data.end(), dec.data().begin()));
}

TEST(CorruptInput, BadConstructionArguments) {
  const GenerationLayout layout(8, 10, 80);
  std::vector<std::uint8_t> small(79), fine(80);
  EXPECT_THROW(Decoder(layout, small, kSeeds), Error);
  EXPECT_THROW(Decoder(layout, fine, kSeeds, {.batch = 0}), Error);
  EXPECT_THROW(Decoder(layout, fine, kSeeds, {.batch = 257}), Error);
  Decoder dec(layout, fine, kSeeds);
  EXPECT_THROW(dec.source_symbol(8), Error);
  EXPECT_FALSE(dec.is_decoded(8));
}

}  // namespace
}  // namespace ncast::rlnc
