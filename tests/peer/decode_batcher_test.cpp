// The batched decoding of swarms (peer/decode_batcher.hpp) with its host backend, in every build: it
// agrees with the CPU decoder symbol by symbol and through the receiver (the GPU backend passes the
// same checks in tests/gpu/peer_batch_decoder_test.cpp); full batches go at once and a lone
// generation after the wait; a backend that fails is replaced by the host for that batch; a decoder
// that goes away is never called back.
#include "peer/decode_batcher.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

#include "tests/peer/batched_decoding_checks.hpp"

namespace ncast::peer {
namespace {

using namespace std::chrono_literals;
using testing::Decoded;

std::vector<rlnc::GenerationLayout> layouts() {
  return {{48, 257, 48 * 257 - 100}, {16, 32, 16 * 32}, {1, 5, 3}, {128, 1024, 128 * 1024 - 999}};
}

TEST(DecodeBatcher, SegmentDecodersAgreeWithTheCpuPathOnSeveralThreads) {
  auto batcher = std::make_shared<DecodeBatcher>(make_host_batch_backend(), BatchOptions{8, 2000us});
  EXPECT_EQ(batcher->description().rfind("batched host", 0), 0u) << batcher->description();
  testing::check_segment_decoders_agree(batcher, layouts(), 4);
}

TEST(DecodeBatcher, ReceiverOutputAndAccountingMatchTheCpuPath) {
  testing::check_receivers_agree(std::make_shared<DecodeBatcher>(make_host_batch_backend(), BatchOptions{}), 5);
}

// The host backend, recording each batch's size and when it came.
class Recording final : public BatchDecodeBackend {
 public:
  std::string description() const override { return "recording"; }
  void decode(std::span<BatchJob* const> jobs) override {
    if (fail) throw std::runtime_error("device lost");
    sizes.push_back(jobs.size());
    at.push_back(std::chrono::steady_clock::now());
    host->decode(jobs);
  }
  bool fail = false;
  std::unique_ptr<BatchDecodeBackend> host = make_host_batch_backend();
  std::vector<std::size_t> sizes;
  std::vector<std::chrono::steady_clock::time_point> at;
};

// Generations of 4 systematic symbols of 8 octets, completed at once.
struct Generations {
  Generations(DecoderFactory& factory, std::size_t count, std::mt19937_64& rng) {
    const rlnc::GenerationLayout layout(4, 8, 30);
    for (std::size_t g = 0; g < count; ++g) {
      data.push_back(testing::random_bytes(layout.data_bytes(), rng));
      const rlnc::SourceBlock block(layout, data.back());
      decoders.push_back(factory.open(layout, {g, 0}));
      for (std::uint32_t i = 0; i < 4; ++i) {
        const std::span<const std::uint8_t> payload(block.symbol(i), 8);
        EXPECT_EQ(decoders.back()->add({rlnc::SymbolKind::systematic, i, {}, {}, payload}),
                  rlnc::AddResult::innovative);
      }
      EXPECT_TRUE(decoders.back()->complete());
    }
  }
  void expect_decoded() {
    for (std::size_t g = 0; g < decoders.size(); ++g) {
      const auto got = decoders[g]->data();
      EXPECT_TRUE(std::equal(got.begin(), got.end(), data[g].begin(), data[g].end())) << g;
    }
  }
  std::vector<std::vector<std::uint8_t>> data;
  std::vector<std::unique_ptr<SegmentDecoder>> decoders;
};

TEST(DecodeBatcher, FullBatchesGoAtOnceAndALoneGenerationAfterTheWait) {
  std::mt19937_64 rng(3);
  auto backend = std::make_unique<Recording>();
  Recording& rec = *backend;
  auto batcher = std::make_shared<DecodeBatcher>(std::move(backend), BatchOptions{4, 500ms});
  Decoded decoded;
  const auto factory = batcher->factory(decoded.callback());
  const auto start = std::chrono::steady_clock::now();
  Generations gens(*factory, 10, rng);
  ASSERT_TRUE(decoded.wait_for(10));
  EXPECT_EQ(rec.sizes, (std::vector<std::size_t>{4, 4, 2}));
  ASSERT_EQ(rec.at.size(), 3u);
  EXPECT_LT(rec.at[1] - start, 400ms) << "full batches do not wait";
  EXPECT_GE(rec.at[2] - start, 500ms) << "the last two waited for company";
  gens.expect_decoded();
  const BatchStats s = batcher->stats();
  EXPECT_EQ(s.batches, 3u);
  EXPECT_EQ(s.generations, 10u);
  EXPECT_GE(s.latency_max_s, 0.5);
  EXPECT_GT(s.decode_s, 0.0);
}

TEST(DecodeBatcher, ABackendThatFailsIsReplacedByTheHostForThatBatch) {
  std::mt19937_64 rng(4);
  auto backend = std::make_unique<Recording>();
  backend->fail = true;
  auto batcher = std::make_shared<DecodeBatcher>(std::move(backend), BatchOptions{3, 1000us});
  Decoded decoded;
  const auto factory = batcher->factory(decoded.callback());
  Generations gens(*factory, 6, rng);
  ASSERT_TRUE(decoded.wait_for(6));
  gens.expect_decoded();
  const BatchStats s = batcher->stats();
  EXPECT_EQ(s.failed_batches, s.batches);
  EXPECT_EQ(s.host_generations, 6u);
  EXPECT_EQ(s.first_error, "device lost");
}

TEST(DecodeBatcher, ADecoderResetOrGoneIsNotCalledBack) {
  std::mt19937_64 rng(5);
  auto batcher = std::make_shared<DecodeBatcher>(make_host_batch_backend(), BatchOptions{100, 200ms});
  Decoded decoded;
  const auto factory = batcher->factory(decoded.callback());
  {
    Generations gens(*factory, 3, rng);
    gens.decoders[0]->reset();
    EXPECT_FALSE(gens.decoders[0]->data_ready());
    EXPECT_THROW(gens.decoders[0]->data(), rlnc::Error);
  }
  std::this_thread::sleep_for(400ms);
  EXPECT_EQ(decoded.count(), 0u);
  EXPECT_EQ(batcher->stats().generations, 0u);
}

TEST(DecodeBatcher, RefusesBadOptions) {
  EXPECT_THROW(DecodeBatcher(make_host_batch_backend(), BatchOptions{0, 1000us}), std::invalid_argument);
  EXPECT_THROW(DecodeBatcher(make_host_batch_backend(), BatchOptions{4, -1us}), std::invalid_argument);
  EXPECT_THROW(DecodeBatcher(nullptr, BatchOptions{}), std::invalid_argument);
}

}  // namespace
}  // namespace ncast::peer
