#pragma once
// A stream the server encodes: its segments in host memory suited to the coder (page-locked for CUDA,
// and then also resident on the GPU), each with its SHA-256, and coded symbols from the shared CodedCache. Segments are
// appended by ingest (all at once for a file, as data arrives for a live source) and never change afterwards.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "coding/host_memory.hpp"
#include "coding/rlnc/coefficients.hpp"
#include "server/coded_cache.hpp"
#include "server/symbol_source.hpp"

namespace ncast::server {

// What a sender needs of one segment, by value: its block stays where the stream put it (segments
// never change once appended), so a copy serves another thread (StreamReplica) without locks.
struct SegmentRef {
  GenerationRef generation;
  proto::SegmentDescriptor descriptor;
};

// The CODED bodies of a segment's symbols: source symbol i, and seeded coded symbol j from cache.
bool write_systematic_symbol(const SegmentRef& s, std::uint32_t i, proto::Writer& w);
bool write_coded_symbol(CodedCache& cache, const SegmentRef& s, std::uint32_t j, proto::Writer& w);

class MediaStream final : public SymbolSource {
 public:
  // info.n and info.symbol_size fix the segment size n·L; density is that of coded symbols.
  MediaStream(StreamInfo info, CodedCache& cache, rlnc::Density density = rlnc::Density::dense());

  // Appends one segment of 1..n·L octets; throws std::invalid_argument otherwise or once final. entry:
  // a peer joining live may start at it (it begins at a keyframe, or the media has no such structure).
  void append(std::span<const std::uint8_t> data, bool entry = true);
  void finish() { final_ = true; }
  // A live source's measured bitrate as it changes (paced sessions follow it).
  void set_bitrate(std::uint64_t bitrate) { info_.bitrate = bitrate; }

  const StreamInfo& info() const override { return info_; }
  std::uint32_t segment_count() const override { return static_cast<std::uint32_t>(segments_.size()); }
  bool final() const override { return final_; }
  std::uint32_t live_edge() const override { return live_edge_; }
  const proto::SegmentDescriptor& descriptor(std::uint32_t segment) const override {
    return segments_.at(segment).descriptor;
  }
  std::size_t rank(std::uint32_t segment) const override {
    return segment < segments_.size() ? segments_[segment].n_s : 0;
  }
  bool can_send_systematic() const override { return true; }
  bool write_systematic(std::uint32_t segment, std::uint32_t i, proto::Writer& w) override;
  bool write_coded(std::uint32_t segment, std::uint32_t j, proto::Writer& w) override;

  SegmentRef segment(std::uint32_t i) const { return {generation(i), segments_.at(i).descriptor}; }
  CodedCache& cache() const { return cache_; }
  std::uint64_t bytes() const { return bytes_; }
  std::uint32_t epoch() const { return epoch_; }
  std::size_t segment_bytes() const { return std::size_t{info_.n} * info_.symbol_size; }

 private:
  GenerationRef generation(std::uint32_t segment) const;

  struct Segment {
    HostBuffer block;  // n_s·L, zero padded
    std::size_t n_s;
    proto::SegmentDescriptor descriptor;
  };

  StreamInfo info_;
  CodedCache& cache_;
  rlnc::Density density_;
  std::uint64_t seed_;
  std::uint32_t epoch_;  // 1..65535, fresh per process: a restarted server sends new coded symbols
  std::uint64_t cache_base_;
  std::vector<Segment> segments_;
  std::uint64_t bytes_ = 0;
  bool final_ = false;
  std::uint32_t live_edge_ = 0;
};

// The stream id of a name: the first four octets of its SHA-256, so that every server of a stream
// agrees on it without configuration.
std::uint32_t stream_id_of(const std::string& name);

}  // namespace ncast::server
