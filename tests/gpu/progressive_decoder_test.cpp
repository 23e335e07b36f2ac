// The GPU progressive decoder against the CPU decoder (rlnc::Decoder), symbol for symbol: many
// generations of different shapes, their symbols shuffled together (systematic, seeded dense and
// sparse, explicit, recoded combinations, duplicates, corrupt ones, an unknown generation) and fed
// in batches of random sizes. Every outcome, and after every batch every rank and count, must be the
// CPU decoder's; every completed generation must give back its data.
#include "gpu/progressive_decoder.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "coding/rlnc/decoder.hpp"
#include "coding/rlnc/encoder.hpp"
#include "coding/rlnc/error.hpp"
#include "tests/coding/gf_reference.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace ncast::gpu {
namespace {

using gpu::testing::random_bytes;
using Status = ProgressiveDecoder::Status;

struct Generation {
  std::uint32_t id;
  rlnc::GenerationLayout layout;
  rlnc::SeedContext seeds;
  std::vector<std::uint8_t> data;
  rlnc::SourceBlock block;
  std::vector<std::uint8_t> cpu_out;
  rlnc::Decoder cpu;

  Generation(std::uint32_t id_, std::size_t n, std::size_t len, std::size_t data_bytes, std::mt19937_64& rng)
      : id(id_),
        layout(n, len, data_bytes),
        seeds{0x1234567800000000ull | id_, 7 * id_ + 1},
        data(random_bytes(data_bytes, rng)),
        block(layout, data),
        cpu_out(n * len),
        cpu(layout, cpu_out, seeds) {}
};

// A symbol that owns its bytes, for generation `generation` (possibly not open).
struct Sent {
  std::uint32_t generation;
  rlnc::CodedSymbol symbol;
};

// symbols of g: systematic ones, seeded dense and sparse coded ones, explicit ones, recoded
// combinations of two explicit ones, duplicates, and corrupt ones.
void make_symbols(const Generation& g, std::mt19937_64& rng, std::vector<Sent>& out) {
  const std::size_t n = g.layout.n(), len = g.layout.symbol_size();
  const rlnc::Encoder systematic(g.block, g.seeds, {.systematic = true});
  const rlnc::Encoder dense(g.block, g.seeds, {.systematic = false});
  const rlnc::Encoder sparse(g.block, g.seeds, {.systematic = false, .density = rlnc::Density::from_fraction(0.05)});
  const rlnc::Encoder explicit_form(g.block, g.seeds,
                                    {.systematic = false, .form = rlnc::CoefficientForm::explicit_vector});
  std::vector<rlnc::CodedSymbol> mine;
  for (std::uint32_t i = 0; i < n; ++i)
    if (rng() % 3 == 0) mine.push_back(systematic.produce(i));
  for (std::uint32_t i = 0; i < n / 2 + 2; ++i) mine.push_back(dense.produce(1000 + i));
  for (std::uint32_t i = 0; i < n / 4 + 2; ++i) mine.push_back(sparse.produce(5000 + i));
  std::vector<rlnc::CodedSymbol> explicit_ones;
  for (std::uint32_t i = 0; i < n / 4 + 2; ++i) explicit_ones.push_back(explicit_form.produce(9000 + i));
  for (std::size_t r = 0; r + 1 < explicit_ones.size() && r < 4; ++r) {
    const auto& a = explicit_ones[r];
    const auto& b = explicit_ones[r + 1];
    const auto ca = static_cast<std::uint8_t>(1 + rng() % 255), cb = static_cast<std::uint8_t>(1 + rng() % 255);
    rlnc::CodedSymbol mix{
        rlnc::SymbolKind::recoded, 0, {}, std::vector<std::uint8_t>(n), std::vector<std::uint8_t>(len)};
    for (std::size_t j = 0; j < n; ++j)
      mix.coefficients[j] =
          ncast::testing::slow_mul(ca, a.coefficients[j]) ^ ncast::testing::slow_mul(cb, b.coefficients[j]);
    for (std::size_t j = 0; j < len; ++j)
      mix.payload[j] = ncast::testing::slow_mul(ca, a.payload[j]) ^ ncast::testing::slow_mul(cb, b.payload[j]);
    if (std::any_of(mix.coefficients.begin(), mix.coefficients.end(), [](std::uint8_t c) { return c != 0; }))
      mine.push_back(mix);
  }
  mine.insert(mine.end(), explicit_ones.begin(), explicit_ones.end());
  for (int d = 0; d < 3; ++d) mine.push_back(mine[rng() % mine.size()]);  // duplicates
  // Corrupt: a payload of the wrong length, an all-zero vector, a systematic index past n, a recoded
  // symbol without coefficients, a vector of the wrong length.
  rlnc::CodedSymbol bad = dense.produce(77);
  bad.payload.push_back(1);
  mine.push_back(bad);
  mine.push_back({rlnc::SymbolKind::coded, 3, {}, std::vector<std::uint8_t>(n, 0), std::vector<std::uint8_t>(len, 5)});
  mine.push_back(
      {rlnc::SymbolKind::systematic, static_cast<std::uint32_t>(n), {}, {}, std::vector<std::uint8_t>(len, 5)});
  mine.push_back({rlnc::SymbolKind::recoded, 0, {}, {}, std::vector<std::uint8_t>(len, 5)});
  mine.push_back(
      {rlnc::SymbolKind::coded, 4, {}, std::vector<std::uint8_t>(n + 1, 1), std::vector<std::uint8_t>(len, 5)});
  for (auto& s : mine) out.push_back({g.id, std::move(s)});
}

void decode_and_compare(std::size_t round, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const std::size_t shapes[][3] = {{1, 3, 3},
                                   {2, 1, 2},
                                   {17, 1200, 17 * 1200 - 5},
                                   {32, 4096, 32 * 4096},
                                   {128, 4096, 128 * 4096},
                                   {256, 1200, 256 * 1200},
                                   {128, 1, 100},
                                   {5, 65536, 5 * 65536},
                                   {64, 999, 64 * 999 - 998}};
  std::vector<std::unique_ptr<Generation>> gens;
  ProgressiveDecoder gpu({.round = round});
  std::vector<Sent> sent;
  for (const auto& [n, len, bytes] : shapes) {
    const auto id = static_cast<std::uint32_t>(100 + 3 * gens.size());
    gens.push_back(std::make_unique<Generation>(id, n, len, bytes, rng));
    gpu.open(id, gens.back()->layout, gens.back()->seeds);
    make_symbols(*gens.back(), rng, sent);
  }
  sent.push_back({99, rlnc::CodedSymbol{rlnc::SymbolKind::systematic, 0, {}, {}, {1, 2, 3}}});  // not open
  std::shuffle(sent.begin(), sent.end(), rng);
  auto cpu_of = [&](std::uint32_t id) -> Generation* {
    for (auto& g : gens)
      if (g->id == id) return g.get();
    return nullptr;
  };

  std::size_t at = 0;
  while (at < sent.size()) {
    const std::size_t count = std::min<std::size_t>(sent.size() - at, 1 + rng() % 200);
    std::vector<ProgressiveDecoder::Arrival> arrivals;
    for (std::size_t i = at; i < at + count; ++i) arrivals.push_back({sent[i].generation, sent[i].symbol.view()});
    std::vector<ProgressiveDecoder::Outcome> outcomes(count);
    std::size_t want_completed = 0;
    const std::size_t got_completed = gpu.add(arrivals, outcomes);
    for (std::size_t i = 0; i < count; ++i) {
      SCOPED_TRACE("arrival " + std::to_string(at + i) + " of generation " + std::to_string(arrivals[i].generation));
      Generation* g = cpu_of(arrivals[i].generation);
      if (g == nullptr) {
        EXPECT_EQ(outcomes[i].status, Status::rejected);
        EXPECT_EQ(outcomes[i].error, rlnc::Errc::unknown_generation);
        continue;
      }
      const bool was_complete = g->cpu.complete();
      try {
        const auto r = g->cpu.add(arrivals[i].symbol);
        ASSERT_EQ(outcomes[i].status, r == rlnc::AddResult::innovative ? Status::innovative : Status::non_innovative);
        ASSERT_EQ(outcomes[i].completed, !was_complete && g->cpu.complete());
        want_completed += outcomes[i].completed;
      } catch (const rlnc::Error& e) {
        ASSERT_EQ(outcomes[i].status, Status::rejected);
        ASSERT_EQ(outcomes[i].error, e.code());
      }
    }
    EXPECT_EQ(got_completed, want_completed);
    for (const auto& g : gens) {
      ASSERT_EQ(gpu.rank(g->id), g->cpu.rank()) << "generation " << g->id;
      ASSERT_EQ(gpu.received(g->id), g->cpu.received());
      ASSERT_EQ(gpu.non_innovative(g->id), g->cpu.non_innovative());
      ASSERT_EQ(gpu.complete(g->id), g->cpu.complete());
    }
    at += count;
  }
  std::size_t complete = 0;
  for (const auto& g : gens) {
    if (!gpu.complete(g->id)) {
      EXPECT_THROW(gpu.sources(g->id), rlnc::Error);
      continue;
    }
    ++complete;
    std::vector<std::uint8_t> got(g->data.size() + 3, 0xEE);
    gpu.download(g->id, got);
    EXPECT_TRUE(std::equal(g->data.begin(), g->data.end(), got.begin())) << "generation " << g->id;
    EXPECT_EQ(got.back(), 0xEE) << "wrote past the data";
    const auto cpu_data = g->cpu.data();
    EXPECT_TRUE(std::equal(cpu_data.begin(), cpu_data.end(), g->data.begin()));
  }
  EXPECT_GE(complete, gens.size() - 1);  // the sparse and systematic draws leave at most an unlucky one short
}

class ProgressiveAgreement : public ::testing::TestWithParam<std::size_t> {};

TEST_P(ProgressiveAgreement, SameOutcomesRanksAndDataAsTheCpuDecoder) {
  NCAST_REQUIRE_CUDA_DEVICE();
  decode_and_compare(GetParam(), 1000 + GetParam());
}

INSTANTIATE_TEST_SUITE_P(Rounds, ProgressiveAgreement, ::testing::Values(1, 7, 32, 64),
                         [](const auto& info) { return "round" + std::to_string(info.param); });

TEST(ProgressiveDecoder, ReopeningRestartsAGeneration) {
  NCAST_REQUIRE_CUDA_DEVICE();
  std::mt19937_64 rng(5);
  Generation g(1, 8, 100, 800, rng);
  const rlnc::Encoder enc(g.block, g.seeds, {.systematic = false});
  ProgressiveDecoder gpu({.round = 3});
  gpu.open(1, g.layout, g.seeds);
  std::vector<rlnc::CodedSymbol> symbols;
  for (std::uint32_t i = 0; i < 8; ++i) symbols.push_back(enc.produce(i));
  std::vector<ProgressiveDecoder::Arrival> arrivals;
  for (const auto& s : symbols) arrivals.push_back({1, s.view()});
  std::vector<ProgressiveDecoder::Outcome> outcomes(arrivals.size());
  gpu.add(std::span(arrivals).first(5), std::span(outcomes).first(5));
  EXPECT_EQ(gpu.rank(1), 5u);
  gpu.open(1, g.layout, g.seeds);
  EXPECT_EQ(gpu.rank(1), 0u);
  EXPECT_EQ(gpu.add(arrivals, outcomes), 1u);
  EXPECT_TRUE(gpu.complete(1));
  std::vector<std::uint8_t> got(800);
  gpu.download(1, got);
  EXPECT_EQ(got, g.data);
  gpu.close(1);
  EXPECT_EQ(gpu.size(), 0u);
}

TEST(ProgressiveDecoder, BadUseIsAClearError) {
  // Checked before anything touches a device.
  EXPECT_THROW(ProgressiveDecoder({.round = 0}), std::invalid_argument);
  EXPECT_THROW(ProgressiveDecoder({.round = 65}), std::invalid_argument);
  NCAST_REQUIRE_CUDA_DEVICE();
  ProgressiveDecoder gpu;
  std::vector<ProgressiveDecoder::Outcome> outcomes(1);
  EXPECT_THROW(gpu.add({}, outcomes), std::invalid_argument);
  try {
    gpu.rank(42);
    FAIL() << "rank of a generation that is not open";
  } catch (const rlnc::Error& e) {
    EXPECT_EQ(e.code(), rlnc::Errc::unknown_generation);
  }
}

TEST(ProgressiveDecoder, IncompleteGenerationsHaveNoData) {
  NCAST_REQUIRE_CUDA_DEVICE();
  std::mt19937_64 rng(6);
  Generation g(2, 4, 64, 256, rng);
  ProgressiveDecoder gpu;
  gpu.open(2, g.layout, g.seeds);
  const rlnc::Encoder enc(g.block, g.seeds);
  const auto s = enc.produce(0);
  const ProgressiveDecoder::Arrival arrivals[] = {{2, s.view()}};
  std::vector<ProgressiveDecoder::Outcome> outcomes(1);
  gpu.add(arrivals, outcomes);
  EXPECT_EQ(outcomes[0].status, Status::innovative);
  std::vector<std::uint8_t> out(256);
  try {
    gpu.download(2, out);
    FAIL() << "download before completion";
  } catch (const rlnc::Error& e) {
    EXPECT_EQ(e.code(), rlnc::Errc::not_decoded);
  }
}

}  // namespace
}  // namespace ncast::gpu
