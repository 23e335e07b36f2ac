// A media stream's symbols, as a peer sees them: systematic symbols are the source, seeded ones decode
// with the coefficients the peer draws from (server id, stream id, segment, index), and the
// descriptors carry each segment's length and SHA-256.
#include "server/media_stream.hpp"

#include <gtest/gtest.h>

#include <random>

#include "coding/cpu_engine.hpp"
#include "coding/rlnc/decoder.hpp"
#include "protocol/crypto.hpp"

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

}  // namespace
}  // namespace ncast::server
