#pragma once
// A server-side source of one stream of 16 × 32-octet symbols per segment, as the peer tests feed
// receivers and decoders: its MANIFEST, its segment table and CODED bodies of any symbol.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "coding/cpu_engine.hpp"
#include "server/media_stream.hpp"

namespace ncast::peer::testing {

struct StreamSource {
  StreamSource(std::uint32_t server_id, const std::vector<std::uint8_t>& media)
      : coder(server::make_engine_chunk_coder(engine)), cache(*coder, 1 << 20) {
    stream = std::make_unique<server::MediaStream>(
        server::StreamInfo{"s", server::stream_id_of("s"), server_id, 16, 32, 0, false}, cache);
    for (std::size_t off = 0; off < media.size(); off += stream->segment_bytes())
      stream->append({media.data() + off, std::min(stream->segment_bytes(), media.size() - off)});
    stream->finish();
  }
  proto::ManifestBody manifest() const {
    proto::ManifestBody m;
    m.server_id = stream->info().server_id;
    m.stream_id = stream->info().stream_id;
    m.name = stream->info().name;
    m.n = 16;
    m.symbol_size = 32;
    m.segment_count = stream->segment_count();
    return m;
  }
  proto::SegmentsBody segments() const {
    proto::SegmentsBody b;
    b.segment_count = stream->segment_count();
    b.stream_flags = proto::stream_flags::final;
    for (std::uint32_t i = 0; i < b.segment_count; ++i) b.descriptors.push_back(stream->descriptor(i));
    return b;
  }
  // A CODED body of segment, seeded symbol j (or systematic symbol j when systematic).
  std::vector<std::uint8_t> body(std::uint32_t segment, std::uint32_t j, bool systematic = false) {
    std::vector<std::uint8_t> b(200);
    proto::Writer w(b);
    if (systematic) stream->write_systematic(segment, j, w);
    else stream->write_coded(segment, j, w);
    b.resize(w.size());
    return b;
  }
  CpuEngine engine;
  std::unique_ptr<server::ChunkCoder> coder;
  server::CodedCache cache;
  std::unique_ptr<server::MediaStream> stream;
};

}  // namespace ncast::peer::testing
