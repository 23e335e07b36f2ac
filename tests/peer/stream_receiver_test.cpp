// The receiver: symbols from two servers (two seed spaces) and a relay (recoded) decode into one
// segment; every segment is verified and written once, in order; contradicting manifests and segment
// tables are refused; a segment whose hash does not match is started over, and a source whose
// symbols lie is found out and ignored.
#include "peer/stream_receiver.hpp"

#include <gtest/gtest.h>

#include <random>

#include "coding/cpu_engine.hpp"
#include "coding/rlnc/recoder.hpp"
#include "peer/relay/relay_source.hpp"
#include "tests/peer/stream_source.hpp"

namespace ncast::peer {
namespace {

using Source = testing::StreamSource;
using namespace std::chrono_literals;

class ReceiverTest : public ::testing::Test {
 public:
  ReceiverTest() {
    media.resize(16 * 32 * 3 + 77);
    for (auto& b : media) b = static_cast<std::uint8_t>(rng());
  }
  StreamReceiver::Result feed(StreamReceiver& r, std::vector<std::uint8_t> body, std::uint32_t server_id) {
    const auto v = r.read_coded(body);
    EXPECT_TRUE(v);
    return r.on_symbol(*v, server_id, Clock::now());
  }
  std::mt19937_64 rng{17};
  std::vector<std::uint8_t> media, written;
  StreamReceiver::Writer writer = [this](std::span<const std::uint8_t> d) {
    written.insert(written.end(), d.begin(), d.end());
  };
};

TEST_F(ReceiverTest, TwoServersAndInOrderOutput) {
  Source a(1, media), b(2, media);
  StreamReceiver r({4, false, std::chrono::milliseconds(500)}, writer);
  ASSERT_EQ(r.adopt(a.manifest()), "");
  ASSERT_EQ(r.adopt(b.manifest()), "");
  ASSERT_TRUE(r.on_segments(a.segments()));
  ASSERT_TRUE(r.on_segments(b.segments()));  // the same table again: fine
  EXPECT_TRUE(r.final_seen());
  // Segment 1 first (out of order), half from each server; then 0, 3, 2.
  for (std::uint32_t seg : {1u, 0u, 3u, 2u}) {
    const std::size_t n_s = *r.symbols_of(seg);
    for (std::uint32_t j = 0; r.rank(seg) < n_s && j < 64; ++j) {
      const auto res = feed(r, (j % 2 ? b : a).body(seg, j), (j % 2 ? 2 : 1));
      ASSERT_NE(res, StreamReceiver::Result::rejected);
    }
    if (seg == 1) {
      EXPECT_TRUE(written.empty());  // waits for segment 0
    }
  }
  EXPECT_TRUE(r.complete());
  EXPECT_EQ(written, media);
  EXPECT_EQ(r.stats().segments_written, 4u);
  EXPECT_EQ(r.stats().symbols_needed, 16u * 3 + 3);
  EXPECT_EQ(feed(r, a.body(0, 99), 1), StreamReceiver::Result::after_decode);
}

// Stalls: a player waits for a segment the server has, beyond the threshold (0.5 s here).
class StallTest : public ReceiverTest {
 public:
  StallTest() : source(1, media) {}
  // The segment table up to segment k, as a live server grows it.
  void announce(std::uint32_t k, TimePoint at) {
    proto::SegmentsBody b;
    b.first = k;
    b.segment_count = k + 1;
    b.descriptors = {source.segments().descriptors.at(k)};
    ASSERT_TRUE(receiver.on_segments(b, at));
  }
  void arrive(std::uint32_t segment, TimePoint at) {
    for (std::uint32_t j = 0; j < Source::kN; ++j) {
      const auto body = source.body(segment, j, true);
      receiver.on_symbol(*receiver.read_coded(body), 1, at);
    }
    ASSERT_EQ(receiver.stats().segments_written, segment + 1);
  }
  Source source;
  StreamReceiver receiver{{4, false, std::chrono::milliseconds(500)}, writer};
  const TimePoint t0 = Clock::now();
};

TEST_F(StallTest, ALiveSegmentNotMadeYetIsNoStall) {
  ASSERT_EQ(receiver.adopt(source.manifest()), "");  // no bitrate: the player plays nothing ahead
  announce(0, t0);
  arrive(0, t0);
  announce(1, t0 + 3s);  // the source paused for three seconds
  arrive(1, t0 + 3200ms);
  announce(2, t0 + 3300ms);
  arrive(2, t0 + 4300ms);  // a second after the server had it: a stall of 0.5 s beyond the threshold
  EXPECT_EQ(receiver.stats().stalls, 1u);
  EXPECT_NEAR(receiver.stats().stall_seconds, 0.5, 1e-6);
}

TEST_F(StallTest, APlayerAtTheBitrateWaitsOnlyOnceItHasPlayedWhatItHas) {
  auto m = source.manifest();
  m.bitrate = 8 * 512;  // a segment plays for one second
  ASSERT_EQ(receiver.adopt(m), "");
  ASSERT_TRUE(receiver.on_segments(source.segments(), t0));
  arrive(0, t0);
  arrive(1, t0 + 1400ms);  // due at 1 s: waited 0.4 s
  arrive(2, t0 + 3000ms);  // due at 2.4 s: waited 0.6 s, 0.1 s beyond the threshold
  EXPECT_EQ(receiver.stats().stalls, 1u);
  EXPECT_NEAR(receiver.stats().stall_seconds, 0.1, 1e-6);
  EXPECT_NEAR(receiver.stats().below_bitrate_seconds, 1.0, 1e-6);  // every wait, stall or not
}

TEST_F(ReceiverTest, WrongServerIdMeansWrongCoefficients) {
  Source a(1, media);
  StreamReceiver r({4, false, std::chrono::milliseconds(500)}, writer);
  r.adopt(a.manifest());
  r.on_segments(a.segments());
  // Symbols of server 1 resolved as if from server 5: they decode to something else, which the
  // SHA-256 check catches; the segment starts over.
  for (std::uint32_t j = 0; j < 40 && r.stats().hash_failures == 0; ++j) feed(r, a.body(0, j), 5);
  EXPECT_EQ(r.stats().hash_failures, 1u);
  EXPECT_EQ(r.rank(0), 0u);
  EXPECT_TRUE(written.empty());
  for (std::uint32_t j = 0; j < 16; ++j) feed(r, a.body(0, j, true), 1);  // systematic: no seeds involved
  EXPECT_EQ(written, std::vector<std::uint8_t>(media.begin(), media.begin() + 512));
}

// Two sources of one stream, the second lying in every payload (one octet flipped): symbols
// alternate between them, `lying_per_honest` of the liar's for each honest one, segment after segment.
// Returns the symbols fed.
std::size_t feed_polluted_stream(ReceiverTest& t, StreamReceiver& r, Source& honest, Source& liar,
                                 int lying_per_honest) {
  std::size_t fed = 0;
  for (std::uint32_t seg = 0; seg < honest.segment_count(); ++seg)
    for (std::uint32_t j = 0; r.next_needed() <= seg && j < 400; ++j) {
      t.feed(r, honest.body(seg, j), 1);
      for (int k = 0; k < lying_per_honest; ++k) {
        auto body = liar.body(seg, 1000 + j * lying_per_honest + k);
        body.back() ^= 0x5A;  // the payload's last octet
        t.feed(r, body, 2);
      }
      fed += 1 + lying_per_honest;
    }
  return fed;
}

TEST_F(ReceiverTest, APollutingSourceIsConvictedFromTheEvidenceAndTheStreamArrivesIntact) {
  Source a(1, media), b(2, media);
  StreamReceiver r({4, false, std::chrono::milliseconds(500)}, writer);
  r.adopt(a.manifest());
  r.adopt(b.manifest());
  r.on_segments(a.segments());
  feed_polluted_stream(*this, r, a, b, 1);
  EXPECT_EQ(written, media);  // never a wrong octet, nothing missing
  // Segment 0 failed once, was decoded again from the honest source alone (which had sent as many
  // symbols, and first), and the liar's symbols set aside contradict it: convicted, then ignored.
  EXPECT_EQ(r.stats().hash_failures, 1u);
  EXPECT_EQ(r.stats().recovered, 1u);
  ASSERT_EQ(r.polluters().size(), 1u);
  const Polluter& p = r.polluters().at(2);
  EXPECT_EQ(p.segment, 0u);
  EXPECT_GT(p.bad_symbols, 0u);
  EXPECT_GT(r.stats().from_polluters, 0u);
  EXPECT_EQ(r.take_new_polluters(), std::vector<std::uint32_t>{2});
  EXPECT_TRUE(r.take_new_polluters().empty());
}

TEST_F(ReceiverTest, ABusierLiarIsTriedAloneFirstAndConvictedByItsOwnSymbols) {
  Source a(1, media), b(2, media);
  StreamReceiver r({4, false, std::chrono::milliseconds(500)}, writer);
  r.adopt(a.manifest());
  r.adopt(b.manifest());
  r.on_segments(a.segments());
  feed_polluted_stream(*this, r, a, b, 2);
  EXPECT_EQ(written, media);
  // The liar sent more, so segment 0 was decoded from it alone next: wrong again, and this time
  // from its symbols only.
  EXPECT_EQ(r.stats().hash_failures, 2u);
  EXPECT_EQ(r.stats().recovered, 1u);
  ASSERT_EQ(r.polluters().size(), 1u);
  EXPECT_TRUE(r.polluters().contains(2));
  EXPECT_GT(r.stats().held_back, 0u);  // the honest source's symbols waited meanwhile
}

TEST_F(ReceiverTest, WithOnlyALiarNothingIsWritten) {
  Source b(2, media);
  StreamReceiver r({4, false, std::chrono::milliseconds(500)}, writer);
  r.adopt(b.manifest());
  r.on_segments(b.segments());
  for (std::uint32_t j = 0; j < 64; ++j) {
    auto body = b.body(0, j);
    body[body.size() - 1 - j % 32] ^= 1;
    feed(r, body, 2);
  }
  EXPECT_TRUE(written.empty());
  EXPECT_EQ(r.stats().hash_failures, 1u);
  EXPECT_TRUE(r.polluters().contains(2));
  EXPECT_EQ(feed(r, b.body(0, 100), 2), StreamReceiver::Result::ignored);
}

TEST_F(ReceiverTest, RecodedSymbolsFromARelay) {
  Source a(1, media);
  StreamReceiver relay({4, true, std::chrono::milliseconds(500)}, [](std::span<const std::uint8_t>) {});
  relay.adopt(a.manifest());
  relay.on_segments(a.segments());
  // The relay holds 10 of 16 dimensions of segment 0: its recoded symbols span exactly those.
  for (std::uint32_t j = 0; relay.rank(0) < 10 && j < 30; ++j) feed(relay, a.body(0, j), 1);
  ASSERT_EQ(relay.rank(0), 10u);
  StreamReceiver sink({4, false, std::chrono::milliseconds(500)}, writer);
  sink.adopt(a.manifest());
  sink.on_segments(a.segments());
  rlnc::Recoder recoder(*relay.decoder(0), {rlnc::coefficient_seed(77, Source::kStreamId), 0});
  auto recoded_body = [&] {
    std::vector<std::uint8_t> b(200);
    proto::Writer w(b);
    proto::write_coded_header(w, {0, proto::WireKind::recoded, proto::kDenseWire, 0});
    std::uint8_t* c = w.reserve(16);
    std::uint8_t* p = w.reserve(32);
    recoder.produce(1, &p, c);
    b.resize(w.size());
    return b;
  };
  for (int i = 0; i < 14; ++i) feed(sink, recoded_body(), 77);
  EXPECT_EQ(sink.rank(0), 10u);  // never more than the relay has
  for (std::uint32_t j = 30; relay.rank(0) < 16 && j < 60; ++j) feed(relay, a.body(0, j), 1);
  for (int i = 0; i < 30 && sink.rank(0) < 16; ++i) feed(sink, recoded_body(), 77);
  EXPECT_EQ(written, std::vector<std::uint8_t>(media.begin(), media.begin() + 512));
}

TEST_F(ReceiverTest, ARelayKeepsItsDecodedSegmentsWithinItsBudget) {
  media.resize(16 * 32 * 20);  // 20 full segments
  for (auto& b : media) b = static_cast<std::uint8_t>(rng());
  Source a(1, media);
  const std::uint64_t cost = 16 * 32 + 16 * 16;  // a segment's octets and its coefficient rows
  StreamReceiver relay({4, true, std::chrono::milliseconds(500), 3 * cost + cost / 2}, writer);
  relay.adopt(a.manifest());
  relay.on_segments(a.segments());
  RelaySource source(relay, 9);
  std::vector<std::uint8_t> body(200);
  for (std::uint32_t seg = 0; seg < 20; ++seg) {
    for (std::uint32_t j = 0; j < 16; ++j) feed(relay, a.body(seg, j, true), 1);
    ASSERT_EQ(relay.next_needed(), seg + 1);
    // The last three decoded segments are kept and recoded from; the one before is gone.
    EXPECT_LE(relay.stats().kept_bytes, 3 * cost);
    EXPECT_EQ(relay.stats().evicted, seg < 3 ? 0u : seg - 2);
    EXPECT_EQ(source.rank(seg), 16u);
    proto::Writer w(body);
    EXPECT_TRUE(source.write_coded(seg, 0, w));
    if (seg >= 3) {
      EXPECT_EQ(relay.decoder(seg - 3), nullptr);
      EXPECT_EQ(source.rank(seg - 3), 0u);
      proto::Writer gone(body);
      EXPECT_FALSE(source.write_coded(seg - 3, 0, gone));
    }
  }
  EXPECT_EQ(written, media);
  EXPECT_EQ(relay.stats().kept_peak_bytes, 3 * cost);
  // What is kept still feeds a sink: it decodes the last segment from recoded symbols alone.
  written.clear();
  StreamReceiver sink({4, false, std::chrono::milliseconds(500)}, writer);
  auto manifest = a.manifest();
  manifest.start_segment = 19;
  sink.adopt(manifest);
  sink.on_segments(a.segments());
  for (int i = 0; i < 40 && sink.next_needed() == 19; ++i) {
    body.assign(200, 0);
    proto::Writer w(body);
    ASSERT_TRUE(source.write_coded(19, 0, w));
    body.resize(w.size());
    feed(sink, body, 9);
  }
  EXPECT_EQ(written, std::vector<std::uint8_t>(media.end() - 512, media.end()));
}

TEST_F(ReceiverTest, ContradictionsAreRefused) {
  Source a(1, media);
  StreamReceiver r({4, false, std::chrono::milliseconds(500)}, writer);
  r.adopt(a.manifest());
  auto other = a.manifest();
  other.symbol_size = 64;
  EXPECT_NE(r.adopt(other), "");
  other = a.manifest();
  other.name = "t";
  EXPECT_NE(r.adopt(other), "");
  ASSERT_TRUE(r.on_segments(a.segments()));
  auto bad = a.segments();
  bad.descriptors[2].hash[0] ^= 1;
  EXPECT_FALSE(r.on_segments(bad));
  auto grown = a.segments();
  grown.segment_count += 1;
  grown.descriptors.clear();
  grown.first = grown.segment_count;
  EXPECT_FALSE(r.on_segments(grown));  // a final stream does not grow
  EXPECT_EQ(r.known(), 4u);
}

TEST_F(ReceiverTest, WindowAndAckEntries) {
  Source a(1, media);
  StreamReceiver r({2, false, std::chrono::milliseconds(500)}, writer);
  r.adopt(a.manifest());
  r.on_segments(a.segments());
  EXPECT_EQ(feed(r, a.body(2, 0), 1), StreamReceiver::Result::out_of_window);
  feed(r, a.body(1, 0), 1);
  feed(r, a.body(1, 1), 1);
  const auto entries = r.ack_entries();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].segment, 1u);
  EXPECT_EQ(entries[0].rank, 2);
  EXPECT_FALSE(entries[0].decoded);
}

}  // namespace
}  // namespace ncast::peer
