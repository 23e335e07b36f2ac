// The batch API: many generations encoded and decoded together, bad symbols reported per symbol.
#include "coding/rlnc/batch.hpp"

#include <gtest/gtest.h>

#include <random>

#include "tests/coding/rlnc/rlnc_test_support.hpp"

namespace ncast::rlnc {
namespace {

TEST(Batch, ManyGenerationsEncodedAndDecodedTogether) {
  std::mt19937_64 rng(8);
  const std::uint64_t seed = coefficient_seed(3, 4);
  const std::size_t gens = 6, len = 300;
  // Generations of several sizes, as a segmented object's last one is smaller.
  std::vector<std::unique_ptr<SourceBlock>> blocks;
  std::vector<std::unique_ptr<Encoder>> encoders;
  std::vector<std::vector<std::uint8_t>> data, outputs;
  GenerationSet set(seed, {.batch = 8});
  for (std::uint32_t g = 0; g < gens; ++g) {
    const auto layout = GenerationLayout::for_data(g == gens - 1 ? 1000 : 30 * len, len);
    data.push_back(testing::random_bytes(layout.data_bytes(), rng));
    blocks.push_back(std::make_unique<SourceBlock>(layout, data.back()));
    encoders.push_back(
        std::make_unique<Encoder>(*blocks.back(), SeedContext{seed, 100 + g}, EncoderOptions{.systematic = false}));
    outputs.emplace_back(layout.block_bytes());
    set.open(100 + g, layout, outputs.back());
  }
  // Each round: 4 symbols of every generation in one encode batch, then one decode batch in a
  // shuffled order with a third of them lost.
  std::vector<std::vector<std::uint8_t>> payloads(gens * 4, std::vector<std::uint8_t>(len));
  std::vector<std::uint8_t*> outs;
  for (auto& p : payloads) outs.push_back(p.data());
  std::size_t completed = 0;
  for (std::uint32_t round = 0; completed < gens; ++round) {
    ASSERT_LT(round, 40u);
    std::vector<EncodeJob> jobs;
    for (std::size_t g = 0; g < gens; ++g) jobs.push_back({encoders[g].get(), 4 * round, 4, outs.data() + 4 * g});
    encode_batch(jobs);
    std::vector<GenerationSet::Arrival> arrivals;
    for (std::size_t g = 0; g < gens; ++g)
      for (std::uint32_t i = 0; i < 4; ++i)
        if (rng() % 3 != 0)
          arrivals.push_back(
              {static_cast<std::uint32_t>(100 + g), {SymbolKind::coded, 4 * round + i, {}, {}, payloads[4 * g + i]}});
    std::shuffle(arrivals.begin(), arrivals.end(), rng);
    std::vector<GenerationSet::Outcome> outcomes(arrivals.size());
    const std::size_t done = set.add(arrivals, outcomes);
    completed += done;
    std::size_t flagged = 0;
    for (const auto& o : outcomes) {
      EXPECT_NE(o.status, GenerationSet::Status::rejected);
      flagged += o.completed;
    }
    EXPECT_EQ(flagged, done);
  }
  for (std::size_t g = 0; g < gens; ++g) {
    const Decoder* d = set.find(static_cast<std::uint32_t>(100 + g));
    ASSERT_NE(d, nullptr);
    ASSERT_TRUE(std::equal(data[g].begin(), data[g].end(), d->data().begin(), d->data().end())) << g;
  }
  set.close(100);
  EXPECT_EQ(set.find(100), nullptr);
  EXPECT_EQ(set.size(), gens - 1);
}

TEST(Batch, RejectionsAreReportedAndTheRestGoesOn) {
  std::mt19937_64 rng(9);
  const GenerationLayout layout(4, 10, 40);
  const auto data = testing::random_bytes(40, rng);
  const SourceBlock block(layout, data);
  const Encoder enc(block, {coefficient_seed(1, 1), 0});
  std::vector<std::uint8_t> out(40);
  GenerationSet set(coefficient_seed(1, 1));
  set.open(0, layout, out);
  std::vector<CodedSymbol> symbols;
  for (std::uint32_t id = 0; id < 4; ++id) symbols.push_back(enc.produce(id));
  const std::vector<std::uint8_t> short_payload(9), zeros(4, 0);
  std::vector<GenerationSet::Arrival> arrivals = {
      {0, symbols[0].view()},
      {7, symbols[1].view()},                                        // unknown generation
      {0, {SymbolKind::systematic, 1, {}, {}, short_payload}},       // wrong length
      {0, {SymbolKind::coded, 0, {}, zeros, symbols[1].payload}},    // zero vector
      {0, {SymbolKind::systematic, 4, {}, {}, symbols[1].payload}},  // index out of range
      {0, symbols[0].view()},                                        // duplicate
      {0, symbols[1].view()},
      {0, symbols[2].view()},
      {0, symbols[3].view()},
  };
  std::vector<GenerationSet::Outcome> outcomes(arrivals.size());
  EXPECT_EQ(set.add(arrivals, outcomes), 1u);
  using S = GenerationSet::Status;
  EXPECT_EQ(outcomes[0].status, S::innovative);
  EXPECT_EQ(outcomes[1].status, S::rejected);
  EXPECT_EQ(outcomes[1].error, Errc::unknown_generation);
  EXPECT_EQ(outcomes[2].error, Errc::wrong_payload_length);
  EXPECT_EQ(outcomes[3].error, Errc::zero_coefficients);
  EXPECT_EQ(outcomes[4].error, Errc::index_out_of_range);
  EXPECT_EQ(outcomes[5].status, S::non_innovative);
  EXPECT_TRUE(outcomes[8].completed);
  EXPECT_TRUE(std::equal(data.begin(), data.end(), set.find(0)->data().begin()));
  std::vector<GenerationSet::Outcome> too_few(2);
  EXPECT_THROW(set.add(arrivals, too_few), Error);
}

}  // namespace
}  // namespace ncast::rlnc
