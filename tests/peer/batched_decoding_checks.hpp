#pragma once
// What batched decoding (peer/decode_batcher.hpp) must keep of the CPU path, whatever its backend:
// the same outcomes, errors, ranks and bytes per segment decoder, with many receivers on several
// threads sharing the batcher; and through StreamReceiver, over lossy streams from two servers and a
// liar, the same output and the same accounting. Run with the host backend in tests/peer (every
// build) and with the GPU's in tests/gpu.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <thread>
#include <vector>

#include "coding/cpu_engine.hpp"
#include "coding/rlnc/error.hpp"
#include "peer/decode_batcher.hpp"
#include "peer/stream_receiver.hpp"
#include "tests/peer/stream_source.hpp"
#include "tests/peer/symbol_mix.hpp"

namespace ncast::peer::testing {

inline std::vector<std::uint8_t> random_bytes(std::size_t n, std::mt19937_64& rng) {
  std::vector<std::uint8_t> out(n);
  for (auto& b : out) b = static_cast<std::uint8_t>(rng());
  return out;
}

// Counts the batcher's call-backs; waits for them.
class Decoded {
 public:
  std::function<void()> callback() {
    return [this] {
      std::lock_guard lock(mutex_);
      ++count_;
      changed_.notify_all();
    };
  }
  // False when fewer than n came within 20 s.
  bool wait_for(std::size_t n) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, std::chrono::seconds(20), [&] { return count_ >= n; });
  }
  std::size_t count() {
    std::lock_guard lock(mutex_);
    return count_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::size_t count_ = 0;
};

// What add() did: its result, or the error it threw, and the rank after.
struct Added {
  std::optional<rlnc::AddResult> result;
  std::optional<rlnc::Errc> error;
  std::size_t rank = 0;
  bool operator==(const Added&) const = default;
};

inline Added add(SegmentDecoder& d, const rlnc::SymbolView& s) {
  Added a;
  try {
    a.result = d.add(s);
  } catch (const rlnc::Error& e) {
    a.error = e.code();
  }
  a.rank = d.rank();
  return a;
}

// One receiver's generations, decoded by both paths from the same lossy symbols. Each generation:
// systematic symbols then seeded (dense or sparse) and explicit ones, 30 % lost, with duplicates and
// three corrupt symbols (short payload, systematic index past n, all-zero explicit vector); one
// generation in three is reset halfway and fed again, as a receiver restarts a failed segment.
inline void run_receiver(const std::shared_ptr<DecodeBatcher>& batcher,
                         const std::vector<rlnc::GenerationLayout>& layouts, std::uint64_t seed, Decoded& decoded,
                         std::size_t& completions) {
  std::mt19937_64 rng(seed);
  const auto batched = batcher->factory(decoded.callback());
  const auto cpu = make_cpu_decoder_factory();
  struct Done {
    std::unique_ptr<SegmentDecoder> cpu, batched;
    std::vector<std::uint8_t> data;
  };
  std::vector<Done> done;
  for (std::size_t g = 0; g < layouts.size(); ++g) {
    SCOPED_TRACE("receiver seed " + std::to_string(seed) + ", generation " + std::to_string(g));
    const rlnc::GenerationLayout& layout = layouts[g];
    const rlnc::SeedContext seeds{seed * 7919 + g, static_cast<std::uint32_t>(g)};
    auto data = random_bytes(layout.data_bytes(), rng);
    const SymbolMix mix(layout, data, seeds);

    Done d{cpu->open(layout, seeds), batched->open(layout, seeds), std::move(data)};
    const bool restart = g % 3 == 1;
    for (int pass = restart ? 0 : 1; pass < 2; ++pass) {
      std::vector<rlnc::CodedSymbol> sent;
      std::size_t errors = 0;
      for (std::uint32_t id = 0; !d.cpu->complete() && id < 4 * layout.n() + 64; ++id) {
        const rlnc::CodedSymbol s = mix.pick(id, rng, sent);
        if (rng() % 10 < 3) continue;             // lost
        if (!mix.corrupt(id)) sent.push_back(s);  // duplicates of good ones
        const Added c = add(*d.cpu, s.view()), b = add(*d.batched, s.view());
        ASSERT_EQ(b, c) << "pass " << pass << ", symbol " << id;
        errors += c.error.has_value();
        if (pass == 0 && d.cpu->rank() * 2 >= layout.n()) break;
      }
      if (pass == 0) {
        d.cpu->reset();
        d.batched->reset();
        EXPECT_EQ(d.batched->rank(), 0u);
        EXPECT_FALSE(d.batched->data_ready());
        continue;
      }
      ASSERT_TRUE(d.cpu->complete());
      ASSERT_TRUE(d.batched->complete());
      // Past the first corrupt symbol, at least: all three were sent unless lost.
      EXPECT_LE(errors, 3u);
      // A non-innovative symbol once complete, as the CPU decoder: nothing changes.
      ASSERT_EQ(add(*d.batched, mix.fresh().view()), add(*d.cpu, mix.fresh().view()));
    }
    EXPECT_EQ(d.batched->host_rows(), nullptr);
    done.push_back(std::move(d));
  }
  completions = done.size();
  // The batcher's timer sends every generation on without anyone asking for data.
  ASSERT_TRUE(decoded.wait_for(done.size())) << decoded.count() << " of " << done.size() << " decoded";
  for (auto& d : done) {
    EXPECT_TRUE(d.batched->data_ready());
    const auto b = d.batched->data(), c = d.cpu->data();
    EXPECT_TRUE(std::equal(b.begin(), b.end(), d.data.begin(), d.data.end()));
    EXPECT_TRUE(std::equal(c.begin(), c.end(), d.data.begin(), d.data.end()));
  }
}

// Receivers on `threads` threads at once, each with `layouts`, sharing one batcher.
inline void check_segment_decoders_agree(const std::shared_ptr<DecodeBatcher>& batcher,
                                         const std::vector<rlnc::GenerationLayout>& layouts, unsigned threads) {
  std::vector<std::unique_ptr<Decoded>> decoded;
  std::vector<std::size_t> completions(threads, 0);
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) decoded.push_back(std::make_unique<Decoded>());
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&, t] { run_receiver(batcher, layouts, 100 + t, *decoded[t], completions[t]); });
  for (auto& p : pool) p.join();
  std::size_t total = 0;
  for (unsigned t = 0; t < threads; ++t) {
    EXPECT_EQ(completions[t], layouts.size());
    EXPECT_EQ(decoded[t]->count(), completions[t]) << "one call-back per generation decoded";
    total += completions[t];
  }
  const BatchStats s = batcher->stats();
  EXPECT_EQ(s.generations, total);
  EXPECT_GE(s.batches, 1u);
  EXPECT_LE(s.batches, total);
  EXPECT_EQ(s.failed_batches, 0u) << s.first_error;
  EXPECT_EQ(s.host_generations, 0u);
  EXPECT_GT(s.latency_max_s, 0.0);
}

inline StreamReceiver::Result feed(StreamReceiver& r, const std::vector<std::uint8_t>& body, std::uint32_t server_id) {
  const auto v = r.read_coded(body);
  EXPECT_TRUE(v);
  return r.on_symbol(*v, server_id, Clock::now());
}

// Two honest servers and a liar (one octet of every payload flipped, twice as many symbols), 25 %
// of everything lost: the batched receiver writes the same stream, convicts the same liar, and counts
// every symbol as the CPU receiver does. Each segment that reaches full rank is settled before the
// next symbol (as a swarm peer settles it when the batcher calls back).
inline void check_receivers_agree(const std::shared_ptr<DecodeBatcher>& batcher, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const auto media = random_bytes(16 * 32 * 9 + 45, rng);  // 10 segments, the last one short
  StreamSource a(1, media), b(2, media), liar(3, media);
  std::vector<std::uint8_t> out_cpu, out_batched;
  Decoded decoded;
  const StreamReceiver::Options options{4, false, std::chrono::milliseconds(500)};
  StreamReceiver cpu(
      options, [&](std::span<const std::uint8_t> d) { out_cpu.insert(out_cpu.end(), d.begin(), d.end()); },
      make_cpu_decoder_factory());
  StreamReceiver batched(
      options, [&](std::span<const std::uint8_t> d) { out_batched.insert(out_batched.end(), d.begin(), d.end()); },
      batcher->factory(decoded.callback()));
  for (StreamReceiver* r : {&cpu, &batched}) {
    ASSERT_EQ(r->adopt(a.manifest()), "");
    ASSERT_EQ(r->adopt(b.manifest()), "");
    ASSERT_EQ(r->adopt(liar.manifest()), "");
    ASSERT_TRUE(r->on_segments(a.segments()));
  }
  std::size_t callbacks = 0, settled = 0, completed = 0;
  for (std::uint32_t seg = 0; seg < a.segment_count(); ++seg)
    for (std::uint32_t j = 0; cpu.next_needed() <= seg && j < 400; ++j) {
      std::vector<std::pair<std::vector<std::uint8_t>, std::uint32_t>> bodies{{a.body(seg, j), 1},
                                                                              {b.body(seg, 500 + j), 2}};
      for (std::uint32_t k = 0; k < 2 && seg % 3 == 1; ++k) {
        auto body = liar.body(seg, 1000 + 2 * j + k);
        body.back() ^= 0x5A;
        bodies.emplace_back(std::move(body), 3);
      }
      for (const auto& [body, server] : bodies) {
        if (rng() % 4 == 0) continue;  // lost
        const auto c = feed(cpu, body, server), g = feed(batched, body, server);
        completed += c == StreamReceiver::Result::completed;
        if (!batched.decoding()) {
          // (Completed at once when this thread was held up past the batch's wait after submitting.)
          ASSERT_EQ(g, c) << seg << "/" << j << " from " << server;
          settled += g == StreamReceiver::Result::completed;
          continue;
        }
        // Full rank: the batched receiver completes (or finds the lie) once the batch is back.
        ASSERT_EQ(g, StreamReceiver::Result::full_rank) << seg << "/" << j;
        // One call-back per generation submitted; one counted ahead (an immediate completion) makes a
        // round that settles nothing.
        while (batched.decoding()) {
          ASSERT_TRUE(decoded.wait_for(++callbacks));
          settled += batched.settle_decoded(Clock::now());
        }
        ASSERT_EQ(batched.next_needed(), cpu.next_needed()) << seg << "/" << j;
      }
      ASSERT_EQ(batched.rank(seg), cpu.rank(seg));
      ASSERT_EQ(batched.ack_entries(), cpu.ack_entries());
    }
  EXPECT_TRUE(batched.complete());
  EXPECT_EQ(out_batched, media);
  EXPECT_EQ(out_cpu, media);
  EXPECT_EQ(settled, completed);
  const ReceiverStats &g = batched.stats(), &c = cpu.stats();
  EXPECT_GE(c.hash_failures, 1u);
  for (auto field : {&ReceiverStats::symbols, &ReceiverStats::innovative, &ReceiverStats::non_innovative,
                     &ReceiverStats::after_decode, &ReceiverStats::out_of_window, &ReceiverStats::rejected,
                     &ReceiverStats::hash_failures, &ReceiverStats::recovered, &ReceiverStats::from_polluters,
                     &ReceiverStats::held_back, &ReceiverStats::segments_written, &ReceiverStats::bytes_written,
                     &ReceiverStats::symbols_needed})
    EXPECT_EQ(g.*field, c.*field);
  ASSERT_EQ(batched.polluters().size(), 1u);
  EXPECT_TRUE(batched.polluters().contains(3));
}

}  // namespace ncast::peer::testing
