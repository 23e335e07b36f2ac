#include "server/stream_replica.hpp"

namespace ncast::server {

StreamReplica::StreamReplica(const MediaStream& stream, CodedCache& cache)
    : stream_(stream),
      info_(stream.info()),
      cache_(cache),
      first_(stream.first_segment()),
      final_(stream.final()),
      live_edge_(stream.live_edge()) {
  if (stream.file()) return;
  for (std::uint32_t i = 0; i < stream.segment_count(); ++i) {
    descriptors_.push_back(stream.descriptor(i));
    if (i >= first_) held_.push_back(stream.segment(i));
  }
}

void StreamReplica::extend(const std::vector<SegmentRef>& more, bool final, std::uint32_t first,
                           std::uint32_t live_edge, std::uint64_t bitrate) {
  for (const SegmentRef& s : more) {
    descriptors_.push_back(s.descriptor);
    held_.push_back(s);
  }
  for (; first_ < first && !held_.empty(); ++first_) {
    // Its coded symbols are of no more use; the block goes with the last holder.
    cache_.forget(held_.front().generation.key);
    held_.pop_front();
  }
  final_ = final;
  live_edge_ = live_edge;
  info_.bitrate = bitrate;
}

std::uint32_t StreamReplica::segment_count() const {
  return stream_.file() ? stream_.file()->count() : static_cast<std::uint32_t>(descriptors_.size());
}

const proto::SegmentDescriptor& StreamReplica::descriptor(std::uint32_t segment) const {
  return stream_.file() ? stream_.file()->descriptor(segment) : descriptors_.at(segment);
}

std::size_t StreamReplica::rank(std::uint32_t segment) const {
  if (segment >= segment_count() || segment < first_) return 0;
  return symbols_of(segment);
}

const SegmentRef* StreamReplica::ref(std::uint32_t segment) {
  if (segment >= segment_count() || segment < first_) return nullptr;
  const FileSegments* file = stream_.file();
  if (!file) return &held_[segment - first_];
  if (!have_last_ || last_.generation.seeds.segment != segment) {
    last_ = stream_.make_ref(segment, file->descriptor(segment), file->block(segment));
    have_last_ = true;
  }
  return &last_;
}

bool StreamReplica::write_systematic(std::uint32_t segment, std::uint32_t i, proto::Writer& w) {
  const SegmentRef* s = ref(segment);
  return s && write_systematic_symbol(*s, i, w);
}

bool StreamReplica::write_coded(std::uint32_t segment, std::uint32_t j, proto::Writer& w) {
  const SegmentRef* s = ref(segment);
  return s && write_coded_symbol(cache_, *s, j, w);
}

}  // namespace ncast::server
