#pragma once
// One server thread's view of a MediaStream (ncast-server --threads): the segment table copied by value
// and extended by the thread itself when the ingest thread posts new segments, and coded symbols from
// the thread's own CodedCache. A thread's sessions therefore read nothing that another thread writes:
// no lock on the per-packet path. Segment blocks are shared, never copied (they never change).
#include <vector>

#include "server/media_stream.hpp"

namespace ncast::server {

class StreamReplica final : public SymbolSource {
 public:
  // On the thread that owns `stream` (its ingest thread): the segments it has now.
  StreamReplica(const MediaStream& stream, CodedCache& cache);

  // On the replica's thread: segments appended to the stream since, whether it is final now, its live
  // edge and bitrate.
  void extend(const std::vector<SegmentRef>& more, bool final, std::uint32_t live_edge, std::uint64_t bitrate);

  const StreamInfo& info() const override { return info_; }
  std::uint32_t segment_count() const override { return static_cast<std::uint32_t>(segments_.size()); }
  bool final() const override { return final_; }
  std::uint32_t live_edge() const override { return live_edge_; }
  const proto::SegmentDescriptor& descriptor(std::uint32_t segment) const override {
    return segments_.at(segment).descriptor;
  }
  std::size_t rank(std::uint32_t segment) const override {
    return segment < segments_.size() ? segments_[segment].generation.n_s : 0;
  }
  bool can_send_systematic() const override { return true; }
  bool write_systematic(std::uint32_t segment, std::uint32_t i, proto::Writer& w) override;
  bool write_coded(std::uint32_t segment, std::uint32_t j, proto::Writer& w) override;

 private:
  StreamInfo info_;
  CodedCache& cache_;
  std::vector<SegmentRef> segments_;
  bool final_ = false;
  std::uint32_t live_edge_ = 0;
};

}  // namespace ncast::server
