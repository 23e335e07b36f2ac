// The progressive decoder: round trips under loss, duplication and reordering; innovation, rank and
// early release against a textbook reference; in-place decoding without allocation.
#include "coding/rlnc/decoder.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <random>

#include "coding/rlnc/encoder.hpp"
#include "coding/rlnc/error.hpp"
#include "tests/coding/rlnc/allocation_counter.hpp"
#include "tests/coding/rlnc/rlnc_test_support.hpp"

namespace ncast::rlnc {
namespace {

using testing::random_bytes;
using testing::reference_combination;

const SeedContext kSeeds{coefficient_seed(1, 77), 5};

// One generation of random data with a partial last symbol, and its encoder.
struct Fixture {
  Fixture(std::size_t n, std::size_t len, std::uint64_t seed, EncoderOptions options = {})
      : rng(seed),
        layout(n, len, n * len - (len > 1 ? len / 3 : 0)),
        data(random_bytes(layout.data_bytes(), rng)),
        block(layout, data),
        encoder(block, kSeeds, options) {}
  std::mt19937_64 rng;
  GenerationLayout layout;
  std::vector<std::uint8_t> data;
  SourceBlock block;
  Encoder encoder;
};

// A poisoned output buffer with guard bytes after the generation that must survive.
struct Output {
  explicit Output(const GenerationLayout& layout) : bytes(layout.block_bytes() + kGuard, 0xC3) {}
  std::span<std::uint8_t> span() { return std::span(bytes).first(bytes.size() - kGuard); }
  bool guard_intact() const {
    return std::all_of(bytes.end() - kGuard, bytes.end(), [](std::uint8_t b) { return b == 0xC3; });
  }
  static constexpr std::size_t kGuard = 64;
  std::vector<std::uint8_t> bytes;
};

struct ChannelStats {
  std::size_t sent = 0;
};

// Sends symbols 0, 1, 2, ... through a channel that drops with probability loss, duplicates with
// probability dup and shuffles within windows of `window`, until the decoder completes.
ChannelStats transfer(Fixture& f, Decoder& dec, double loss, double dup, std::size_t window) {
  ChannelStats stats;
  std::bernoulli_distribution drop(loss), twice(dup);
  std::vector<CodedSymbol> in_flight;
  for (std::uint32_t id = 0; !dec.complete(); ++id) {
    ++stats.sent;
    if (id > 100000) throw std::runtime_error("no completion after 100000 symbols");
    CodedSymbol s = f.encoder.produce(id);
    if (drop(f.rng)) continue;
    if (twice(f.rng)) in_flight.push_back(s);
    in_flight.push_back(std::move(s));
    if (in_flight.size() >= window) {
      std::shuffle(in_flight.begin(), in_flight.end(), f.rng);
      for (const auto& x : in_flight) dec.add(x.view());
      in_flight.clear();
    }
  }
  return stats;
}

class RoundTrip : public ::testing::TestWithParam<std::tuple<std::size_t, std::size_t>> {};

TEST_P(RoundTrip, LossDuplicatesReordering) {
  const auto [n, len] = GetParam();
  Fixture f(n, len, n * 1000 + len);
  for (const double loss : {0.0, 0.2, 0.5}) {
    Output out(f.layout);
    Decoder dec(f.layout, out.span(), kSeeds);
    transfer(f, dec, loss, 0.05, 1 + f.rng() % 9);
    ASSERT_TRUE(dec.complete());
    ASSERT_EQ(dec.decoded_count(), n);
    ASSERT_TRUE(std::equal(f.data.begin(), f.data.end(), dec.data().begin(), dec.data().end()))
        << "n=" << n << " L=" << len << " loss=" << loss;
    ASSERT_TRUE(out.guard_intact());
    EXPECT_EQ(dec.received() - dec.non_innovative(), n);
  }
}

INSTANTIATE_TEST_SUITE_P(Grid, RoundTrip,
                         ::testing::Combine(::testing::Values(1, 2, 16, 128, 256),
                                            ::testing::Values(1, 17, 1200, 4096)));

TEST(Decoder, NonSystematicDenseAndSparseAndExplicit) {
  const EncoderOptions variants[] = {
      {.systematic = false},
      {.systematic = false, .density = Density::from_fraction(0.1)},
      {.systematic = false, .density = Density::from_fraction(0.01)},
      {.systematic = false, .form = CoefficientForm::explicit_vector},
      {.systematic = true, .density = Density::from_fraction(0.05), .form = CoefficientForm::explicit_vector},
  };
  for (const auto& options : variants) {
    Fixture f(64, 300, 17, options);
    Output out(f.layout);
    Decoder dec(f.layout, out.span(), kSeeds);
    transfer(f, dec, 0.3, 0.0, 1);
    ASSERT_TRUE(std::equal(f.data.begin(), f.data.end(), dec.data().begin(), dec.data().end()))
        << "density " << options.density.fraction();
  }
}

TEST(Decoder, EveryBatchSizeGivesTheSameResult) {
  Fixture f(40, 257, 23, {.systematic = false});
  std::vector<CodedSymbol> symbols;
  for (std::uint32_t id = 0; id < 60; ++id) symbols.push_back(f.encoder.produce(id));
  // A few systematic symbols in between, so batches mix kinds.
  for (std::uint32_t i : {3u, 9u, 27u}) {
    CodedSymbol s{SymbolKind::systematic, i, {}, {}, {f.block.symbol(i), f.block.symbol(i) + 257}};
    symbols.insert(symbols.begin() + 5 * i / 3, s);
  }
  for (std::size_t batch : {1u, 2u, 3u, 7u, 16u, 40u, 256u}) {
    Output out(f.layout);
    Decoder dec(f.layout, out.span(), kSeeds, {.batch = batch});
    for (const auto& s : symbols)
      if (!dec.complete()) dec.add(s.view());
    ASSERT_TRUE(dec.complete()) << "batch " << batch;
    ASSERT_TRUE(std::equal(f.data.begin(), f.data.end(), dec.data().begin(), dec.data().end())) << "batch " << batch;
  }
}

TEST(Decoder, InnovationAndRankMatchAReference) {
  std::mt19937_64 rng(99);
  for (int trial = 0; trial < 40; ++trial) {
    const std::size_t n = 1 + rng() % 12, len = 1 + rng() % 40;
    const GenerationLayout layout(n, len, n * len);
    const auto data = random_bytes(layout.data_bytes(), rng);
    const SourceBlock block(layout, data);
    const Encoder enc(block, kSeeds);
    Output out(layout);
    Decoder dec(layout, out.span(), kSeeds, {.batch = 1 + rng() % 4});
    testing::ReferenceRank ref(n);
    std::vector<std::vector<std::uint8_t>> sent;
    while (!dec.complete()) {
      std::vector<std::uint8_t> c(n, 0);
      const unsigned pick = rng() % 4;
      if (pick == 0 && sent.size() >= 2) {
        // A combination of two earlier vectors: never innovative.
        const auto& a = sent[rng() % sent.size()];
        const auto& b = sent[rng() % sent.size()];
        const auto x = static_cast<std::uint8_t>(rng() | 1), y = static_cast<std::uint8_t>(rng());
        for (std::size_t j = 0; j < n; ++j) c[j] = testing::slow_mul(x, a[j]) ^ testing::slow_mul(y, b[j]);
        if (std::all_of(c.begin(), c.end(), [](auto v) { return v == 0; })) continue;
      } else if (pick == 1) {
        c[rng() % n] = static_cast<std::uint8_t>(rng() | 1);  // a scaled unit vector
      } else {
        for (auto& v : c) v = rng() % 3 == 0 ? static_cast<std::uint8_t>(rng()) : 0;
        if (std::all_of(c.begin(), c.end(), [](auto v) { return v == 0; })) c[0] = 1;
      }
      const auto payload = reference_combination(c, block.bytes(), len);
      const bool expected = ref.add(c);
      const AddResult got = dec.add({SymbolKind::coded, 0, {}, c, payload});
      ASSERT_EQ(got == AddResult::innovative, expected) << "trial " << trial;
      ASSERT_EQ(dec.rank(), ref.rank());
      sent.push_back(c);
    }
    ASSERT_TRUE(std::equal(data.begin(), data.end(), dec.data().begin(), dec.data().end())) << "trial " << trial;
  }
}

TEST(Decoder, HeldRowsAlwaysMatchTheirCoefficients) {
  // Whatever the state (rows pending or settled, columns below the settled prefix), each held row
  // read back through unit mixes is the combination of the sources that its coefficients name.
  Fixture f(24, 96, 4, {.systematic = false, .density = Density::from_fraction(0.2)});
  Output out(f.layout);
  Decoder dec(f.layout, out.span(), kSeeds, {.batch = 5});
  for (std::uint32_t id = 0; !dec.complete(); ++id) {
    if (id % 3 == 0) {
      const std::uint32_t i = id % 24;
      dec.add({SymbolKind::systematic, i, {}, {}, std::span(f.block.bytes()).subspan(i * 96, 96)});
    }
    dec.add(f.encoder.produce(id).view());
    const std::size_t r = dec.rank();
    std::vector<std::uint8_t> unit_mix(r * r, 0), coefs(r * 24, 0xEE);
    for (std::size_t h = 0; h < r; ++h) unit_mix[h * r + h] = 1;
    std::vector<std::vector<std::uint8_t>> payloads(r, std::vector<std::uint8_t>(96, 0xEE));
    std::vector<std::uint8_t*> outs;
    outs.reserve(r);
    for (auto& p : payloads) outs.push_back(p.data());
    dec.combine_held(unit_mix.data(), r, outs.data(), coefs.data());
    testing::ReferenceRank held(24);
    for (std::size_t h = 0; h < r; ++h) {
      const std::span<const std::uint8_t> c(coefs.data() + h * 24, 24);
      ASSERT_EQ(payloads[h], reference_combination(c, f.block.bytes(), 96)) << "id " << id << " row " << h;
      held.add({c.begin(), c.end()});
    }
    ASSERT_EQ(held.rank(), r) << "the held rows are independent";
  }
}

TEST(Decoder, EarlyRelease) {
  Fixture f(8, 50, 8);
  Output out(f.layout);
  Decoder dec(f.layout, out.span(), kSeeds, {.batch = 4});
  auto symbol = [&](std::size_t i) { return std::span(f.block.bytes()).subspan(i * 50, 50); };
  // Sources 2 and 5 as they are: decoded at once.
  dec.add({SymbolKind::systematic, 2, {}, {}, symbol(2)});
  dec.add({SymbolKind::systematic, 5, {}, {}, symbol(5)});
  EXPECT_TRUE(dec.is_decoded(2));
  EXPECT_TRUE(dec.is_decoded(5));
  EXPECT_FALSE(dec.is_decoded(0));
  EXPECT_EQ(dec.decoded_count(), 2u);
  const auto s5 = dec.source_symbol(5);
  EXPECT_TRUE(std::equal(s5.begin(), s5.end(), symbol(5).begin()));
  EXPECT_THROW(dec.source_symbol(0), Error);
  // 3·s0 + 7·s5 + 9·s6, then s6 + 4·s5: both s0 and s6 follow, nothing else does.
  std::vector<std::uint8_t> a(8, 0), b(8, 0);
  a[0] = 3, a[5] = 7, a[6] = 9;
  b[6] = 1, b[5] = 4;
  dec.add({SymbolKind::coded, 0, {}, a, reference_combination(a, f.block.bytes(), 50)});
  EXPECT_FALSE(dec.is_decoded(0));
  EXPECT_FALSE(dec.is_decoded(6));
  dec.add({SymbolKind::recoded, 0, {}, b, reference_combination(b, f.block.bytes(), 50)});
  EXPECT_TRUE(dec.is_decoded(0));
  EXPECT_TRUE(dec.is_decoded(6));
  EXPECT_EQ(dec.decoded_count(), 4u);
  EXPECT_EQ(dec.rank(), 4u);
  for (std::size_t i : {0u, 2u, 5u, 6u}) {
    const auto s = dec.source_symbol(i);
    EXPECT_TRUE(std::equal(s.begin(), s.end(), symbol(i).begin())) << i;
  }
  EXPECT_THROW(dec.data(), Error);
}

// Found by the rlnc_decoder fuzz target: asking about a settled row while rows are pending once read
// columns below the settled prefix from an earlier question's scratch, and answered "not yet".
TEST(Decoder, EarlyReleaseOfASettledRowAfterTheSettledPrefixGrew) {
  Fixture f(6, 40, 21);
  Output out(f.layout);
  Decoder dec(f.layout, out.span(), kSeeds, {.batch = 2});
  auto add = [&](std::vector<std::uint8_t> c) {
    dec.add({SymbolKind::recoded, 0, {}, c, reference_combination(c, f.block.bytes(), 40)});
  };
  add({1, 0x35, 0, 0x7e, 0, 0xc4});  // s0 + a·s1 + b·s3 + c·s5
  add({0, 0, 1, 0, 0, 0});           // flushed with the first: columns 0 and 2 settled
  add({0, 0, 0, 1, 0, 0});           // pending
  EXPECT_FALSE(dec.is_decoded(0));   // s0 + a·s1 + c·s5 so far
  add({0, 1, 0, 0, 0, 0});           // flushed: columns 0 to 3 settled
  add({0, 0, 0, 0, 0, 1});           // pending, and with it s0 = row 0 − c·s5 is known
  EXPECT_TRUE(dec.is_decoded(0));
  EXPECT_FALSE(dec.is_decoded(4));
  EXPECT_EQ(dec.decoded_count(), 5u);
  for (std::size_t i : {0u, 1u, 2u, 3u, 5u}) {
    const auto s = dec.source_symbol(i);
    EXPECT_TRUE(std::equal(s.begin(), s.end(), f.block.bytes().begin() + static_cast<long>(i * 40))) << i;
  }
}

TEST(Decoder, AfterCompletionEverythingIsNonInnovative) {
  Fixture f(4, 16, 12);
  Output out(f.layout);
  Decoder dec(f.layout, out.span(), kSeeds);
  transfer(f, dec, 0.0, 0.0, 1);
  const std::size_t before = dec.received();
  EXPECT_EQ(dec.add(f.encoder.produce(1000).view()), AddResult::non_innovative);
  EXPECT_EQ(dec.received(), before + 1);
  EXPECT_EQ(dec.non_innovative(), before + 1 - 4);
  EXPECT_TRUE(std::equal(f.data.begin(), f.data.end(), dec.data().begin()));
}

TEST(Decoder, ResetStartsOver) {
  Fixture f(16, 33, 13, {.systematic = false});
  Output out(f.layout);
  Decoder dec(f.layout, out.span(), kSeeds);
  for (std::uint32_t id = 0; id < 10; ++id) dec.add(f.encoder.produce(id).view());
  dec.reset();
  EXPECT_EQ(dec.rank(), 0u);
  EXPECT_EQ(dec.received(), 0u);
  for (std::uint32_t id = 100; !dec.complete(); ++id) dec.add(f.encoder.produce(id).view());
  EXPECT_TRUE(std::equal(f.data.begin(), f.data.end(), dec.data().begin()));
}

// A decoder's rows keep what earlier generations left in them (coefficients, transform entries beyond
// the current batch) and its buffer what they decoded: reused, it must answer exactly as a fresh one,
// symbol by symbol, with pivots in no particular order (sparse vectors, sources in between, repeats).
TEST(Decoder, AReusedDecoderAnswersAsAFreshOne) {
  const std::size_t n = 40, len = 100;
  Output reused_out(GenerationLayout(n, len, n * len - len / 3));
  std::optional<Decoder> reused;
  for (std::uint64_t g = 0; g < 4; ++g) {
    Fixture f(n, len, 600 + g, {.systematic = false, .density = Density::from_fraction(g % 2 ? 0.15 : 0.5)});
    if (!reused) reused.emplace(f.layout, reused_out.span(), kSeeds, DecoderOptions{.batch = 7});
    reused->reset();
    Output fresh_out(f.layout);
    Decoder fresh(f.layout, fresh_out.span(), kSeeds, {.batch = 7});
    for (std::uint32_t id = 1000 * static_cast<std::uint32_t>(g); !fresh.complete(); ++id) {
      CodedSymbol s = f.encoder.produce(id);
      if (id % 5 == 0) {
        const std::uint32_t i = (id * 7) % n;
        s = {SymbolKind::systematic, i, {}, {}, {f.block.symbol(i), f.block.symbol(i) + len}};
      }
      for (int repeat = 0; repeat < (id % 11 == 0 ? 2 : 1); ++repeat) {
        ASSERT_EQ(reused->add(s.view()), fresh.add(s.view())) << "generation " << g << " id " << id;
        ASSERT_EQ(reused->rank(), fresh.rank());
        for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(reused->is_decoded(i), fresh.is_decoded(i)) << i;
      }
    }
    ASSERT_TRUE(reused->complete()) << "generation " << g;
    EXPECT_TRUE(std::equal(f.data.begin(), f.data.end(), reused->data().begin(), reused->data().end()));
    EXPECT_TRUE(std::equal(f.data.begin(), f.data.end(), fresh.data().begin(), fresh.data().end()));
    EXPECT_TRUE(reused_out.guard_intact());
  }
}

TEST(Decoder, AddingSymbolsAllocatesNothing) {
  Fixture f(128, 1024, 14, {.systematic = false});
  std::vector<CodedSymbol> symbols;
  for (std::uint32_t id = 0; id < 140; ++id) symbols.push_back(f.encoder.produce(id));
  Output out(f.layout);
  Decoder dec(f.layout, out.span(), kSeeds);
  // Warms the kernels' per-thread scratch: their expansions of the last few matrices, held in entries
  // that a decode's products take in turn, reach their largest sizes within as many decodes as entries.
  for (int warm = 0; warm < 8; ++warm) {
    for (const auto& s : symbols) dec.add(s.view());
    dec.reset();
  }
  const std::size_t before = testing::allocations();
  for (const auto& s : symbols) dec.add(s.view());
  const std::size_t after = testing::allocations();
  ASSERT_TRUE(dec.complete());
  EXPECT_EQ(after - before, 0u);
  EXPECT_TRUE(std::equal(f.data.begin(), f.data.end(), dec.data().begin()));
}

}  // namespace
}  // namespace ncast::rlnc
