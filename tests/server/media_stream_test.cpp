// A media stream's symbols, as a peer sees them: systematic symbols are the source, seeded ones decode
// with the coefficients the peer draws from (server id, stream id, segment, index), and the
// descriptors carry each segment's length and SHA-256.
#include "server/media_stream.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <random>
#include <thread>

#include "coding/cpu_engine.hpp"
#include "coding/rlnc/decoder.hpp"
#include "protocol/crypto.hpp"
#include "server/stream_replica.hpp"
#include "tools/temp_dir.hpp"

namespace ncast::server {
namespace {

TEST(MediaStream, SegmentsDescriptorsAndDecodableSymbols) {
  std::mt19937_64 rng(5);
  CpuEngine engine;
  auto coder = make_engine_chunk_coder(engine);
  CodedCache cache(*coder, 1 << 20);
  StreamInfo info{"clip", stream_id_of("clip"), 42, 8, 64, 0, false};
  MediaStream stream(info, cache);
  std::vector<std::uint8_t> data(8 * 64 * 2 + 100);
  for (auto& x : data) x = static_cast<std::uint8_t>(rng());
  for (std::size_t off = 0; off < data.size(); off += stream.segment_bytes())
    stream.append({data.data() + off, std::min(stream.segment_bytes(), data.size() - off)});
  stream.finish();
  ASSERT_EQ(stream.segment_count(), 3u);
  EXPECT_EQ(stream.descriptor(2).size, 100u);
  EXPECT_EQ(stream.symbols_of(2), 2u);
  EXPECT_EQ(stream.descriptor(1).hash, proto::sha256({data.data() + 512, 512}));
  EXPECT_THROW(stream.append(data), std::invalid_argument);  // final

  // Seeded symbols only: decode segment 2 (n_s = 2) and segment 0 from what write_coded produces.
  for (std::uint32_t seg : {0u, 2u}) {
    const std::size_t n_s = stream.symbols_of(seg);
    rlnc::GenerationLayout layout(n_s, 64, stream.descriptor(seg).size);
    std::vector<std::uint8_t> out(layout.block_bytes(), 0xEE);
    rlnc::Decoder dec(layout, out, {rlnc::coefficient_seed(42, info.stream_id), seg});
    for (std::uint32_t j = 0; !dec.complete() && j < 50; ++j) {
      std::vector<std::uint8_t> body(200);
      proto::Writer w(body);
      ASSERT_TRUE(stream.write_coded(seg, j, w));
      body.resize(w.size());
      auto v = proto::decode_coded_body(body, n_s, 64);
      ASSERT_TRUE(v);
      EXPECT_EQ(v->header.kind, proto::WireKind::seeded);
      EXPECT_EQ(v->header.index >> 16, stream.epoch());
      dec.add({rlnc::SymbolKind::coded, v->header.index, rlnc::Density::dense(), {}, v->payload});
    }
    ASSERT_TRUE(dec.complete());
    EXPECT_TRUE(std::equal(dec.data().begin(), dec.data().end(), data.begin() + seg * 512));
  }
  std::vector<std::uint8_t> body(200);
  proto::Writer w(body);
  ASSERT_TRUE(stream.write_systematic(1, 3, w));
  auto v = proto::decode_coded_body({body.data(), w.size()}, 8, 64);
  ASSERT_TRUE(v);
  EXPECT_TRUE(std::equal(v->payload.begin(), v->payload.end(), data.begin() + 512 + 3 * 64));
  proto::Writer w2(body);
  EXPECT_FALSE(stream.write_systematic(2, 2, w2));  // segment 2 has 2 symbols
  EXPECT_FALSE(stream.write_coded(3, 0, w2));       // no segment 3
}

TEST(MediaStream, RejectsBadSegmentsAndParameters) {
  CpuEngine engine;
  auto coder = make_engine_chunk_coder(engine);
  CodedCache cache(*coder, 1 << 20);
  MediaStream s({"x", 1, 1, 4, 16, 0, true}, cache);
  EXPECT_THROW(s.append({}), std::invalid_argument);
  std::vector<std::uint8_t> big(65);
  EXPECT_THROW(s.append(big), std::invalid_argument);
  EXPECT_THROW(MediaStream({"x", 1, 1, 0, 16, 0, false}, cache), std::invalid_argument);
  EXPECT_THROW(MediaStream({"x", 1, 1, 257, 16, 0, false}, cache), std::invalid_argument);
  EXPECT_NE(stream_id_of("a"), stream_id_of("b"));
}

// A segment's source symbols from systematic packets of source (empty when it sends none).
std::vector<std::uint8_t> systematic_octets(SymbolSource& source, std::uint32_t seg) {
  std::vector<std::uint8_t> octets;
  for (std::uint32_t i = 0; i < source.symbols_of(seg); ++i) {
    std::vector<std::uint8_t> body(2048);
    proto::Writer w(body);
    if (!source.write_systematic(seg, i, w)) return {};
    const auto v = proto::decode_coded_body({body.data(), w.size()}, source.symbols_of(seg), 64);
    octets.insert(octets.end(), v->payload.begin(), v->payload.end());
  }
  octets.resize(source.descriptor(seg).size);
  return octets;
}

TEST(MediaStream, AFileIsServedOnDemandThroughACacheSmallerThanIt) {
  tools::TempDir dir;
  std::mt19937_64 rng(9);
  std::vector<std::uint8_t> data(40 * 512 + 33);
  for (auto& x : data) x = static_cast<std::uint8_t>(rng());
  std::ofstream(dir / "movie", std::ios::binary)
      .write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
  CpuEngine engine;
  auto coder = make_engine_chunk_coder(engine);
  CodedCache cache(*coder, 1 << 20);
  SegmentCache blocks(Backend::cpu, 3 * 512);
  MediaStream stream({"movie", stream_id_of("movie"), 42, 8, 64, 0, false}, cache);
  stream.serve_file(dir / "movie", blocks);
  EXPECT_TRUE(stream.final());
  ASSERT_EQ(stream.segment_count(), 41u);
  EXPECT_EQ(stream.bytes(), data.size());
  EXPECT_EQ(blocks.stats().misses, 0u);
  CodedCache own(*coder, 1 << 20);
  StreamReplica replica(stream, own);
  ASSERT_EQ(replica.segment_count(), 41u);
  // Two readers interleaved over every segment: each keeps a block the other's reads evict.
  for (std::uint32_t seg = 0; seg < 41; ++seg) {
    const std::span<const std::uint8_t> want(data.data() + seg * 512,
                                             std::min<std::size_t>(512, data.size() - seg * 512));
    EXPECT_EQ(replica.descriptor(seg).hash, proto::sha256(want));
    EXPECT_TRUE(std::ranges::equal(
        systematic_octets(replica, (seg * 7) % 41),
        std::span<const std::uint8_t>(data.data() + (seg * 7) % 41 * 512,
                                      std::min<std::size_t>(512, data.size() - (seg * 7) % 41 * 512))));
    EXPECT_TRUE(std::ranges::equal(systematic_octets(stream, seg), want)) << "segment " << seg;
    EXPECT_LE(blocks.stats().bytes, 3u * 512);
  }
  EXPECT_GT(blocks.stats().evictions, 40u);
  EXPECT_THROW(stream.append(data), std::invalid_argument);
}

TEST(MediaStream, ALiveWindowDropsTheOldestSegmentsButNotWhatASenderHolds) {
  CpuEngine engine;
  auto coder = make_engine_chunk_coder(engine);
  CodedCache cache(*coder, 1 << 20);
  MediaStream stream({"cam", stream_id_of("cam"), 1, 4, 64, 0, true}, cache);
  stream.set_window({3 * 256, std::chrono::seconds(0)});
  CodedCache own(*coder, 1 << 20);
  StreamReplica replica(stream, own);
  std::vector<std::vector<std::uint8_t>> segments;
  for (int i = 0; i < 10; ++i) segments.emplace_back(256, static_cast<std::uint8_t>(i + 1));
  stream.append(segments[0]);
  const SegmentRef held = stream.segment(0);  // a sender coding from segment 0
  std::vector<SegmentRef> more{held};
  for (int i = 1; i < 10; ++i) {
    stream.append(segments[i]);
    more.push_back(stream.segment(static_cast<std::uint32_t>(i)));
  }
  EXPECT_EQ(stream.segment_count(), 10u);
  EXPECT_EQ(stream.first_segment(), 7u);
  EXPECT_EQ(stream.held_bytes(), 3u * 256);
  EXPECT_EQ(stream.rank(6), 0u);
  EXPECT_EQ(stream.rank(7), 4u);
  EXPECT_EQ(stream.descriptor(2).hash, proto::sha256(segments[2])) << "descriptors stay";
  EXPECT_TRUE(systematic_octets(stream, 6).empty());
  EXPECT_EQ(systematic_octets(stream, 9), segments[9]);
  // The dropped block lives on with its holder.
  EXPECT_TRUE(std::all_of(held.generation.block, held.generation.block + 256, [](auto x) { return x == 1; }));

  replica.extend(more, false, stream.first_segment(), stream.live_edge(), stream.info().bitrate);
  EXPECT_EQ(replica.first_segment(), 7u);
  EXPECT_EQ(replica.segment_count(), 10u);
  EXPECT_TRUE(systematic_octets(replica, 5).empty());
  EXPECT_EQ(systematic_octets(replica, 8), segments[8]);
  EXPECT_EQ(replica.descriptor(1).hash, proto::sha256(segments[1]));
}

TEST(MediaStream, ALiveWindowInSecondsDropsSegmentsByTheirAge) {
  CpuEngine engine;
  auto coder = make_engine_chunk_coder(engine);
  CodedCache cache(*coder, 1 << 20);
  MediaStream stream({"cam", stream_id_of("cam"), 1, 4, 64, 0, true}, cache);
  stream.set_window({0, std::chrono::seconds(1)});
  const std::vector<std::uint8_t> seg(256, 3);
  stream.append(seg);
  stream.append(seg);
  EXPECT_EQ(stream.first_segment(), 0u);
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  stream.append(seg);
  EXPECT_EQ(stream.first_segment(), 2u) << "the two older than a second went";
  EXPECT_EQ(stream.held_bytes(), 256u);
}

TEST(MediaStream, TheLiveEdgeIsTheNewestEntrySegmentTheWindowStillHolds) {
  CpuEngine engine;
  auto coder = make_engine_chunk_coder(engine);
  CodedCache cache(*coder, 1 << 20);
  MediaStream stream({"cam", stream_id_of("cam"), 1, 4, 64, 0, true}, cache);
  stream.set_window({3 * 256, std::chrono::seconds(0)});
  const std::vector<std::uint8_t> seg(256, 5);
  stream.append(seg, true);
  stream.append(seg, false);
  EXPECT_EQ(stream.live_edge(), 0u) << "the newest segment a player can start at";
  stream.append(seg, true);
  stream.append(seg, false);
  EXPECT_EQ(stream.live_edge(), 2u);
  // A group of pictures longer than the window: the last entry segment is dropped, so a joining peer
  // starts at the oldest segment still held, never at one no longer served.
  for (int i = 0; i < 3; ++i) stream.append(seg, false);
  EXPECT_EQ(stream.first_segment(), 4u);
  EXPECT_EQ(stream.live_edge(), 4u);
}

}  // namespace
}  // namespace ncast::server
