// The peer's GPU decoding path (ncast-peer --decoder gpu) against its CPU path: the same symbols give
// the same outcomes, ranks, errors and bytes, one segment decoder at a time and through the
// StreamReceiver, with a lying source among the honest one (the GPU path must catch it the same
// way) and as a relay (segments the GPU decoded are recoded from once verified, within the budget).
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <random>
#include <vector>

#include "coding/cpu_engine.hpp"
#include "coding/rlnc/encoder.hpp"
#include "coding/rlnc/error.hpp"
#include "coding/rlnc/recoder.hpp"
#include "peer/decoder_factory.hpp"
#include "peer/relay/relay_source.hpp"
#include "peer/stream_receiver.hpp"
#include "tests/gpu/gpu_test_support.hpp"
#include "tests/peer/batched_decoding_checks.hpp"

namespace ncast::peer {
namespace {

using Source = testing::StreamSource;
using gpu::testing::random_bytes;
using testing::add;
using testing::Added;

TEST(PeerGpuDecoder, SegmentDecodersAgreeWithTheCpuPath) {
  NCAST_REQUIRE_CUDA_DEVICE();
  std::mt19937_64 rng(61);
  const auto gpu = make_decoder_factory(DecoderChoice::gpu);
  EXPECT_EQ(gpu->description().rfind("gpu ", 0), 0u) << gpu->description();
  const auto cpu = make_cpu_decoder_factory();
  const rlnc::GenerationLayout layout(48, 257, 48 * 257 - 100);
  const rlnc::SeedContext seeds{0x5eed0000beefull, 3};
  const auto data = random_bytes(layout.data_bytes(), rng);
  const rlnc::SourceBlock block(layout, data);

  // Systematic, seeded dense and sparse, explicit; duplicates; corrupt ones (short payload, a
  // systematic index past n, an all-zero explicit vector).
  const rlnc::Encoder systematic(block, seeds, {.systematic = true});
  const rlnc::Encoder dense(block, seeds, {.systematic = false});
  const rlnc::Encoder sparse(block, seeds, {.systematic = false, .density = rlnc::Density::from_fraction(0.1)});
  const rlnc::Encoder explicit_form(block, seeds,
                                    {.systematic = false, .form = rlnc::CoefficientForm::explicit_vector});
  std::vector<rlnc::CodedSymbol> symbols;
  for (std::uint32_t i = 0; i < 48; i += 3) symbols.push_back(systematic.produce(i));
  for (std::uint32_t i = 0; i < 20; ++i) symbols.push_back(dense.produce(500 + i));
  for (std::uint32_t i = 0; i < 20; ++i) symbols.push_back(sparse.produce(900 + i));
  for (std::uint32_t i = 0; i < 10; ++i) symbols.push_back(explicit_form.produce(1300 + i));
  for (int i = 0; i < 6; ++i) symbols.push_back(symbols[rng() % symbols.size()]);
  auto short_payload = dense.produce(2000);
  short_payload.payload.pop_back();
  auto past_n = systematic.produce(1);
  past_n.index = 48;
  auto zero = explicit_form.produce(2001);
  std::fill(zero.coefficients.begin(), zero.coefficients.end(), std::uint8_t{0});
  symbols.insert(symbols.end(), {short_payload, past_n, zero});
  std::shuffle(symbols.begin(), symbols.end(), rng);

  auto on_gpu = gpu->open(layout, seeds);
  auto on_cpu = cpu->open(layout, seeds);
  EXPECT_EQ(on_gpu->host_rows(), nullptr);
  EXPECT_NE(on_cpu->host_rows(), nullptr);
  // Twice: the second time after a reset, as a failed segment is decoded again.
  for (int pass = 0; pass < 2; ++pass) {
    std::size_t errors = 0;
    for (std::size_t i = 0; i < symbols.size(); ++i) {
      const Added g = add(*on_gpu, symbols[i].view()), c = add(*on_cpu, symbols[i].view());
      ASSERT_EQ(g, c) << "pass " << pass << ", symbol " << i;
      errors += c.error.has_value();
    }
    EXPECT_EQ(errors, 3u);
    ASSERT_TRUE(on_cpu->complete());
    ASSERT_TRUE(on_gpu->complete());
    const auto got = on_gpu->data();
    EXPECT_TRUE(std::equal(got.begin(), got.end(), data.begin(), data.end()));
    on_gpu->reset();
    on_cpu->reset();
    EXPECT_EQ(on_gpu->rank(), 0u);
    EXPECT_THROW(on_gpu->data(), rlnc::Error);
  }
}

StreamReceiver::Result feed(StreamReceiver& r, const std::vector<std::uint8_t>& body, std::uint32_t server_id) {
  const auto v = r.read_coded(body);
  EXPECT_TRUE(v);
  return r.on_symbol(*v, server_id, Clock::now());
}

TEST(PeerGpuDecoder, ReceiverOutputPollutionAndRelayMatchTheCpuPath) {
  NCAST_REQUIRE_CUDA_DEVICE();
  std::mt19937_64 rng(62);
  const auto media = random_bytes(16 * 32 * 9 + 45, rng);  // 10 segments, the last one short
  Source honest(1, media), liar(2, media);
  const std::uint64_t segment_cost = 16 * 32 + 16 * 16;
  std::vector<std::uint8_t> out_cpu, out_gpu;
  // Relays, so that decoded segments are kept: 4 of them at most.
  StreamReceiver::Options options{4, true, std::chrono::milliseconds(500), 4 * segment_cost};
  StreamReceiver cpu(
      options, [&](std::span<const std::uint8_t> d) { out_cpu.insert(out_cpu.end(), d.begin(), d.end()); },
      make_cpu_decoder_factory());
  StreamReceiver gpu(
      options, [&](std::span<const std::uint8_t> d) { out_gpu.insert(out_gpu.end(), d.begin(), d.end()); },
      make_decoder_factory(DecoderChoice::gpu));
  for (StreamReceiver* r : {&cpu, &gpu}) {
    ASSERT_EQ(r->adopt(honest.manifest()), "");
    ASSERT_EQ(r->adopt(liar.manifest()), "");
    ASSERT_TRUE(r->on_segments(honest.segments()));
  }
  // The liar flips an octet of every payload and sends twice as much as the honest source, so a
  // segment first fails, is decoded from the liar alone (failing again) and then from the honest one.
  bool seen_partial = false;
  for (std::uint32_t seg = 0; seg < honest.segment_count(); ++seg)
    for (std::uint32_t j = 0; cpu.next_needed() <= seg && j < 400; ++j) {
      ASSERT_EQ(feed(gpu, honest.body(seg, j), 1), feed(cpu, honest.body(seg, j), 1)) << seg << "/" << j;
      for (std::uint32_t k = 0; k < 2; ++k) {
        auto body = liar.body(seg, 1000 + 2 * j + k);
        body.back() ^= 0x5A;
        ASSERT_EQ(feed(gpu, body, 2), feed(cpu, body, 2)) << seg << "/" << j << "/" << k;
      }
      ASSERT_EQ(gpu.rank(seg), cpu.rank(seg));
      // Rows on the GPU are recoded from only once the segment verified.
      if (cpu.next_needed() <= seg && cpu.rank(seg) > 0) {
        seen_partial = true;
        EXPECT_NE(cpu.decoder(seg), nullptr);
        EXPECT_EQ(gpu.decoder(seg), nullptr);
      }
    }
  EXPECT_TRUE(seen_partial);
  EXPECT_TRUE(gpu.complete());
  EXPECT_EQ(out_gpu, media);
  EXPECT_EQ(out_cpu, media);
  const ReceiverStats &g = gpu.stats(), &c = cpu.stats();
  EXPECT_GE(g.hash_failures, 2u);
  EXPECT_EQ(g.hash_failures, c.hash_failures);
  EXPECT_EQ(g.recovered, c.recovered);
  EXPECT_EQ(g.held_back, c.held_back);
  EXPECT_EQ(g.from_polluters, c.from_polluters);
  EXPECT_EQ(g.innovative, c.innovative);
  ASSERT_EQ(gpu.polluters().size(), 1u);
  EXPECT_TRUE(gpu.polluters().contains(2));
  // Within the budget: the last 4 segments are kept (the short last one costs less), the rest evicted.
  EXPECT_EQ(g.evicted, 6u);
  EXPECT_LE(g.kept_peak_bytes, 4 * segment_cost);
  EXPECT_EQ(gpu.decoder(5), nullptr);

  // A sink decodes the last full segment from what the GPU relay recodes.
  RelaySource relay(gpu, 77);
  EXPECT_EQ(relay.rank(5), 0u);
  ASSERT_EQ(relay.rank(8), 16u);
  std::vector<std::uint8_t> sunk;
  StreamReceiver sink({16, false, std::chrono::milliseconds(500)},
                      [&](std::span<const std::uint8_t> d) { sunk.insert(sunk.end(), d.begin(), d.end()); });
  auto manifest = honest.manifest();
  manifest.start_segment = 8;
  sink.adopt(manifest);
  sink.on_segments(honest.segments());
  std::vector<std::uint8_t> b(400);
  for (int i = 0; i < 40 && sink.next_needed() == 8; ++i) {
    b.assign(400, 0);
    proto::Writer w(b);
    ASSERT_TRUE(relay.write_coded(8, 0, w));
    b.resize(w.size());
    feed(sink, b, 77);
  }
  EXPECT_EQ(sunk, std::vector<std::uint8_t>(media.begin() + 8 * 512, media.begin() + 9 * 512));
}

}  // namespace
}  // namespace ncast::peer
