#include "server/stream_replica.hpp"

namespace ncast::server {

StreamReplica::StreamReplica(const MediaStream& stream, CodedCache& cache)
    : info_(stream.info()), cache_(cache), final_(stream.final()), live_edge_(stream.live_edge()) {
  segments_.reserve(stream.segment_count());
  for (std::uint32_t i = 0; i < stream.segment_count(); ++i) segments_.push_back(stream.segment(i));
}

void StreamReplica::extend(const std::vector<SegmentRef>& more, bool final, std::uint32_t live_edge,
                           std::uint64_t bitrate) {
  segments_.insert(segments_.end(), more.begin(), more.end());
  final_ = final;
  live_edge_ = live_edge;
  info_.bitrate = bitrate;
}

bool StreamReplica::write_systematic(std::uint32_t segment, std::uint32_t i, proto::Writer& w) {
  return segment < segments_.size() && write_systematic_symbol(segments_[segment], i, w);
}

bool StreamReplica::write_coded(std::uint32_t segment, std::uint32_t j, proto::Writer& w) {
  return segment < segments_.size() && write_coded_symbol(cache_, segments_[segment], j, w);
}

}  // namespace ncast::server
