#pragma once
// A source of one stream of 16 × 32-octet symbols per segment, made with the codec as a server makes
// it (its own seed space, seeded dense coded symbols, source symbols as they are), as the peer tests
// feed receivers and decoders: its MANIFEST, its segment table and CODED bodies of any symbol.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "coding/rlnc/coefficients.hpp"
#include "coding/rlnc/encoder.hpp"
#include "protocol/crypto.hpp"
#include "protocol/packets.hpp"

namespace ncast::peer::testing {

struct StreamSource {
  static constexpr std::uint16_t kN = 16;
  static constexpr std::uint32_t kSymbolSize = 32;
  static constexpr std::uint32_t kStreamId = 0x5EED0001;

  StreamSource(std::uint32_t server_id, const std::vector<std::uint8_t>& media) : server_id(server_id) {
    const std::size_t segment_bytes = std::size_t{kN} * kSymbolSize;
    for (std::size_t off = 0; off < media.size(); off += segment_bytes) {
      const std::size_t size = std::min(segment_bytes, media.size() - off);
      const std::size_t n_s = (size + kSymbolSize - 1) / kSymbolSize;
      Segment s{rlnc::GenerationLayout(n_s, kSymbolSize, size), std::vector<std::uint8_t>(n_s * kSymbolSize, 0), {}};
      std::copy_n(media.begin() + static_cast<long>(off), size, s.block.begin());
      s.descriptor.size = static_cast<std::uint32_t>(size);
      s.descriptor.hash = proto::sha256({media.data() + off, size});
      segments_.push_back(std::move(s));
    }
  }
  std::uint32_t segment_count() const { return static_cast<std::uint32_t>(segments_.size()); }
  proto::ManifestBody manifest() const {
    proto::ManifestBody m;
    m.server_id = server_id;
    m.stream_id = kStreamId;
    m.name = "s";
    m.n = kN;
    m.symbol_size = kSymbolSize;
    m.segment_count = segment_count();
    return m;
  }
  proto::SegmentsBody segments() const {
    proto::SegmentsBody b;
    b.segment_count = segment_count();
    b.stream_flags = proto::stream_flags::final;
    for (const auto& s : segments_) b.descriptors.push_back(s.descriptor);
    return b;
  }
  // A CODED body of segment, seeded symbol j (or systematic symbol j when systematic).
  std::vector<std::uint8_t> body(std::uint32_t segment, std::uint32_t j, bool systematic = false) const {
    const Segment& s = segments_.at(segment);
    std::vector<std::uint8_t> payload(kSymbolSize);
    std::uint8_t* out = payload.data();
    const auto density = rlnc::Density::dense();
    if (systematic) {
      std::copy_n(s.block.begin() + static_cast<long>(j * kSymbolSize), kSymbolSize, payload.begin());
    } else {
      const rlnc::Encoder encoder(s.layout, s.block, {rlnc::coefficient_seed(server_id, kStreamId), segment},
                                  {false, density});
      encoder.produce(j, 1, &out);
    }
    std::vector<std::uint8_t> b(proto::kCodedHeaderSize + kSymbolSize);
    proto::Writer w(b);
    proto::write_coded_header(w, {segment, systematic ? proto::WireKind::systematic : proto::WireKind::seeded,
                                  static_cast<std::uint16_t>(density.threshold() - 1), j});
    w.bytes(payload);
    b.resize(w.size());
    return b;
  }

  std::uint32_t server_id;

 private:
  struct Segment {
    rlnc::GenerationLayout layout;
    std::vector<std::uint8_t> block;  // n_s symbols, zero-padded
    proto::SegmentDescriptor descriptor;
  };
  std::vector<Segment> segments_;
};

}  // namespace ncast::peer::testing
