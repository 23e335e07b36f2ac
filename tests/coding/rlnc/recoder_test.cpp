// Recoding: recoded symbols are exactly what their coefficients say, help before the relay can
// decode, and carry a generation through chains of relays.
#include "coding/rlnc/recoder.hpp"

#include <gtest/gtest.h>

#include <random>

#include "coding/rlnc/encoder.hpp"
#include "coding/rlnc/error.hpp"
#include "tests/coding/rlnc/rlnc_test_support.hpp"

namespace ncast::rlnc {
namespace {

using testing::random_bytes;
using testing::reference_combination;

const SeedContext kSource{coefficient_seed(1, 9), 3};
const SeedContext kRelayA{coefficient_seed(101, 9), 3};
const SeedContext kRelayB{coefficient_seed(102, 9), 3};

struct Node {
  Node(const GenerationLayout& layout, const SeedContext& relay_seeds, std::size_t batch = 16)
      : buffer(layout.block_bytes(), 0x77),
        decoder(layout, buffer, kSource, {.batch = batch}),
        recoder(decoder, relay_seeds) {}
  std::vector<std::uint8_t> buffer;
  Decoder decoder;
  Recoder recoder;
};

TEST(Recoder, RecodedSymbolsAreTheirCombinationsBeforeFullRank) {
  std::mt19937_64 rng(1);
  const GenerationLayout layout(20, 77, 20 * 77);
  const auto data = random_bytes(layout.data_bytes(), rng);
  const SourceBlock block(layout, data);
  const Encoder enc(block, kSource, {.systematic = false});
  Node relay(layout, kRelayA, 3);
  EXPECT_THROW(relay.recoder.produce(), Error);
  for (std::uint32_t id = 0; id < 12; ++id) relay.decoder.add(enc.produce(id).view());
  ASSERT_EQ(relay.decoder.rank(), 12u);
  // Eight at once, then one by one: each payload is the combination its coefficients name.
  std::vector<std::vector<std::uint8_t>> payloads(8, std::vector<std::uint8_t>(77, 0xEE));
  std::vector<std::uint8_t*> outs;
  for (auto& p : payloads) outs.push_back(p.data());
  std::vector<std::uint8_t> coefs(8 * 20, 0xEE);
  relay.recoder.produce(8, outs.data(), coefs.data());
  testing::ReferenceRank span(20);
  for (std::size_t i = 0; i < 8; ++i) {
    const std::span<const std::uint8_t> c(coefs.data() + i * 20, 20);
    EXPECT_EQ(payloads[i], reference_combination(c, block.bytes(), 77)) << i;
    span.add({c.begin(), c.end()});
  }
  EXPECT_EQ(span.rank(), 8u) << "eight random mixes of twelve rows are independent (with high probability)";
  const CodedSymbol one = relay.recoder.produce();
  EXPECT_EQ(one.kind, SymbolKind::recoded);
  EXPECT_EQ(one.payload, reference_combination(one.coefficients, block.bytes(), 77));
  EXPECT_EQ(relay.recoder.emitted(), 9u);
}

TEST(Recoder, ChainSourceRelayRelaySink) {
  // Every hop loses 20 %; relays forward recoded symbols from the first one they hold. The sink sees
  // only recoded symbols and decodes once the rank has made it through both relays.
  for (const auto& [n, len] : {std::pair<std::size_t, std::size_t>{1, 5}, {16, 1200}, {128, 512}}) {
    std::mt19937_64 rng(n + len);
    const GenerationLayout layout(n, len, n * len - len / 2);
    const auto data = random_bytes(layout.data_bytes(), rng);
    const SourceBlock block(layout, data);
    const Encoder enc(block, kSource);
    Node a(layout, kRelayA), b(layout, kRelayB), sink(layout, {});
    std::bernoulli_distribution lost(0.2);
    std::size_t sent = 0;
    for (std::uint32_t id = 0; !sink.decoder.complete(); ++id) {
      ASSERT_LT(id, 20 * n + 100) << "the chain stalled";
      if (!lost(rng)) a.decoder.add(enc.produce(id).view());
      if (a.decoder.rank() > 0 && !lost(rng)) b.decoder.add(a.recoder.produce().view());
      if (b.decoder.rank() > 0 && !lost(rng)) sink.decoder.add(b.recoder.produce().view());
      ++sent;
    }
    EXPECT_TRUE(std::equal(data.begin(), data.end(), sink.decoder.data().begin(), sink.decoder.data().end()))
        << "n=" << n;
    EXPECT_LE(sink.decoder.rank(), b.decoder.rank());
    EXPECT_LE(b.decoder.rank(), a.decoder.rank());
  }
}

TEST(Recoder, SinkMixesSystematicCodedAndRecoded) {
  std::mt19937_64 rng(5);
  const GenerationLayout layout(32, 200, 32 * 200 - 11);
  const auto data = random_bytes(layout.data_bytes(), rng);
  const SourceBlock block(layout, data);
  const Encoder enc(block, kSource, {.density = Density::from_fraction(0.3)});
  Node relay(layout, kRelayA);
  // The relay holds ten source symbols, the sink gets the other systematic ones directly, so coded
  // symbols are needed too.
  for (std::uint32_t id = 0; id < 20; id += 2) relay.decoder.add(enc.produce(id).view());
  std::vector<std::uint8_t> out(layout.block_bytes());
  Decoder sink(layout, out, kSource, {.batch = 6});
  std::size_t recoded = 0, systematic = 0, coded = 0;
  for (std::uint32_t id = 1; !sink.complete(); id += 2) {
    const CodedSymbol direct = enc.produce(id);
    (direct.kind == SymbolKind::systematic ? systematic : coded) += sink.add(direct.view()) == AddResult::innovative;
    if (!sink.complete()) recoded += sink.add(relay.recoder.produce().view()) == AddResult::innovative;
  }
  EXPECT_GT(recoded, 0u);
  EXPECT_GT(systematic, 0u);
  EXPECT_GT(coded, 0u);
  EXPECT_TRUE(std::equal(data.begin(), data.end(), sink.data().begin(), sink.data().end()));
}

}  // namespace
}  // namespace ncast::rlnc
