// The counting decoder (peer/counting_decoder.hpp) against the CPU decoder: the same outcome, error and
// rank for every symbol; and through StreamReceiver, over a lossy stream from two servers, the same
// results, ranks, ACK entries and accounting, with segments written as empty spans of their size.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "coding/rlnc/error.hpp"
#include "peer/counting_decoder.hpp"
#include "peer/stream_receiver.hpp"
#include "tests/peer/batched_decoding_checks.hpp"
#include "tests/peer/stream_source.hpp"
#include "tests/peer/symbol_mix.hpp"

namespace ncast::peer {
namespace {

using testing::add;
using testing::Added;
using testing::feed;
using testing::random_bytes;

// Source symbols, then seeded dense and sparse, explicit and recoded-form ones, 30 % lost, with
// duplicates and three corrupt symbols (short payload, source index past n, all-zero explicit vector);
// reset halfway and fed again, as a receiver restarts a segment.
TEST(CountingDecoder, AgreesWithTheCpuDecoderSymbolBySymbol) {
  std::mt19937_64 rng(41);
  const auto cpu = make_cpu_decoder_factory();
  const auto counting = make_counting_decoder_factory();
  for (const std::size_t n : {1, 7, 16, 128}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    const rlnc::GenerationLayout layout(n, 24, n * 24 - 5);
    const rlnc::SeedContext seeds{99, 4};
    const auto data = random_bytes(layout.data_bytes(), rng);
    const testing::SymbolMix mix(layout, data, seeds);

    const auto c = cpu->open(layout, seeds), k = counting->open(layout, seeds);
    EXPECT_TRUE(k->counts_only());
    EXPECT_FALSE(c->counts_only());
    for (int pass = 0; pass < 2; ++pass) {
      std::vector<rlnc::CodedSymbol> sent;
      for (std::uint32_t id = 0; !c->complete() && id < 4 * n + 64; ++id) {
        const rlnc::CodedSymbol s = mix.pick(id, rng, sent);
        if (rng() % 10 < 3) continue;  // lost
        sent.push_back(s);
        ASSERT_EQ(add(*k, s.view()), add(*c, s.view())) << "pass " << pass << ", symbol " << id;
        if (pass == 0 && c->rank() * 2 >= n) break;
      }
      if (pass == 0) {
        c->reset();
        k->reset();
        EXPECT_EQ(k->rank(), 0u);
        continue;
      }
      ASSERT_TRUE(k->complete());
      ASSERT_EQ(add(*k, mix.fresh().view()), add(*c, mix.fresh().view()));
    }
    EXPECT_TRUE(k->data_ready());
    EXPECT_THROW(k->data(), rlnc::Error);  // it holds none
    EXPECT_EQ(k->host_rows(), nullptr);
  }
}

TEST(CountingDecoder, ReceiverAcknowledgesAndCountsAsADecodingOne) {
  std::mt19937_64 rng(8);
  const auto media = random_bytes(16 * 32 * 9 + 45, rng);  // 10 segments, the last one short
  const testing::StreamSource a(1, media), b(2, media);
  std::vector<std::uint8_t> out;
  std::vector<std::size_t> counted;  // the size of each segment the counting receiver wrote
  const StreamReceiver::Options options{4, false, std::chrono::milliseconds(500)};
  StreamReceiver cpu(
      options, [&](std::span<const std::uint8_t> d) { out.insert(out.end(), d.begin(), d.end()); },
      make_cpu_decoder_factory());
  StreamReceiver* counting_ptr = nullptr;
  StreamReceiver counting(
      options,
      [&](std::span<const std::uint8_t> d) {
        EXPECT_TRUE(d.empty());
        counted.push_back(counting_ptr->descriptor(counting_ptr->next_needed()).size);
      },
      make_counting_decoder_factory());
  counting_ptr = &counting;
  for (StreamReceiver* r : {&cpu, &counting}) {
    ASSERT_EQ(r->adopt(a.manifest()), "");
    ASSERT_EQ(r->adopt(b.manifest()), "");
    ASSERT_TRUE(r->on_segments(a.segments()));
  }
  for (std::uint32_t seg = 0; seg < a.segment_count(); ++seg)
    for (std::uint32_t j = 0; cpu.next_needed() <= seg && j < 400; ++j) {
      // Server 1 sends the source symbols first, as a server does; server 2 seeded coded ones.
      const auto first = j < testing::StreamSource::kN ? a.body(seg, j, true) : a.body(seg, 100 + j);
      for (const auto& [body, server] :
           std::vector<std::pair<std::vector<std::uint8_t>, std::uint32_t>>{{first, 1}, {b.body(seg, 500 + j), 2}}) {
        if (rng() % 4 == 0) continue;  // lost
        ASSERT_EQ(feed(counting, body, server), feed(cpu, body, server)) << seg << "/" << j << " from " << server;
        ASSERT_EQ(counting.ack_entries(), cpu.ack_entries());
      }
      ASSERT_EQ(counting.rank(seg), cpu.rank(seg));
    }
  EXPECT_TRUE(cpu.complete());
  EXPECT_TRUE(counting.complete());
  EXPECT_EQ(out, media);
  ASSERT_EQ(counted.size(), a.segment_count());
  std::size_t total = 0;
  for (const std::size_t s : counted) total += s;
  EXPECT_EQ(total, media.size());
  const ReceiverStats &k = counting.stats(), &c = cpu.stats();
  for (auto field : {&ReceiverStats::symbols, &ReceiverStats::innovative, &ReceiverStats::non_innovative,
                     &ReceiverStats::after_decode, &ReceiverStats::out_of_window, &ReceiverStats::rejected,
                     &ReceiverStats::hash_failures, &ReceiverStats::segments_written, &ReceiverStats::bytes_written,
                     &ReceiverStats::symbols_needed})
    EXPECT_EQ(k.*field, c.*field);
}

}  // namespace
}  // namespace ncast::peer
