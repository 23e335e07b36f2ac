#pragma once
// One server thread's view of a MediaStream (ncast-server --threads). A live stream's segment table is
// copied by value and extended (and its dropped segments let go) by the thread itself when the ingest
// thread posts changes, so its sessions read nothing another thread writes. A file stream's segments
// are read through the stream's FileSegments (thread-safe, the SegmentCache's lock per lookup); the
// replica keeps the block it used last, as a session sends several symbols of a segment in a row. Coded
// symbols come from the thread's own CodedCache. Blocks are shared, never copied.
#include <deque>
#include <vector>

#include "server/media_stream.hpp"

namespace ncast::server {

class StreamReplica final : public SymbolSource {
 public:
  // On the thread that owns `stream` (its ingest thread): the segments it has now.
  StreamReplica(const MediaStream& stream, CodedCache& cache);

  // On the replica's thread: segments appended to the stream since, whether it is final now, its first
  // segment (those below are let go), its live edge and bitrate.
  void extend(const std::vector<SegmentRef>& more, bool final, std::uint32_t first, std::uint32_t live_edge,
              std::uint64_t bitrate);

  const StreamInfo& info() const override { return info_; }
  std::uint32_t segment_count() const override;
  std::uint32_t first_segment() const override { return first_; }
  bool final() const override { return final_; }
  std::uint32_t live_edge() const override { return live_edge_; }
  const proto::SegmentDescriptor& descriptor(std::uint32_t segment) const override;
  std::size_t rank(std::uint32_t segment) const override;
  bool can_send_systematic() const override { return true; }
  bool write_systematic(std::uint32_t segment, std::uint32_t i, proto::Writer& w) override;
  bool write_coded(std::uint32_t segment, std::uint32_t j, proto::Writer& w) override;

 private:
  const SegmentRef* ref(std::uint32_t segment);

  const MediaStream& stream_;
  StreamInfo info_;
  CodedCache& cache_;
  // Live streams: every segment's descriptor, and the segments first_ .. count-1.
  std::deque<proto::SegmentDescriptor> descriptors_;
  std::deque<SegmentRef> held_;
  SegmentRef last_;  // file streams: the segment read last, its block held
  bool have_last_ = false;
  std::uint32_t first_ = 0;
  bool final_ = false;
  std::uint32_t live_edge_ = 0;
};

}  // namespace ncast::server
