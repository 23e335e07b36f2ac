#pragma once
// A stream the server encodes: its segments' source blocks in host memory suited to the coder
// (page-locked for CUDA, and then also resident on the GPU), each with its SHA-256, and coded symbols
// from the shared CodedCache. A file's segments are read on demand through the SegmentCache
// (FileSegments); a live source's are appended as data arrives and held in memory, the oldest dropped
// beyond the stream's retention window. A segment's content never changes, and blocks are shared
// (SegmentBlock): whoever holds a SegmentRef may code from it after the stream let the block go.
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "coding/host_memory.hpp"
#include "coding/rlnc/coefficients.hpp"
#include "server/coded_cache.hpp"
#include "server/file_segments.hpp"
#include "server/segment_cache.hpp"
#include "server/symbol_source.hpp"

namespace ncast::server {

// What a sender needs of one segment, by value: generation.block points into owner, which keeps it
// alive, so a copy serves another thread (StreamReplica) without locks. An empty owner (and a null
// block): the segment is no longer held (a live window dropped it) or not read yet (a file's).
struct SegmentRef {
  GenerationRef generation;
  proto::SegmentDescriptor descriptor;
  SegmentBlock owner;
};

// The CODED bodies of a segment's symbols: source symbol i, and seeded coded symbol j from cache.
// False when the segment's block is not held.
bool write_systematic_symbol(const SegmentRef& s, std::uint32_t i, proto::Writer& w);
bool write_coded_symbol(CodedCache& cache, const SegmentRef& s, std::uint32_t j, proto::Writer& w);

// How much of a live stream is kept: segments beyond either limit (0: none) are dropped, oldest first;
// the newest segment is always kept.
struct LiveWindow {
  std::uint64_t bytes = 0;
  std::chrono::seconds age{0};  // since the segment was appended
};

class MediaStream final : public SymbolSource {
 public:
  // info.n and info.symbol_size fix the segment size n·L; density is that of coded symbols.
  MediaStream(StreamInfo info, CodedCache& cache, rlnc::Density density = rlnc::Density::dense());

  // Serves the file's segments on demand through cache and makes the stream final. Throws
  // std::runtime_error naming the file when it cannot be opened or is empty; std::invalid_argument
  // when the stream has segments already.
  void serve_file(const std::filesystem::path& path, SegmentCache& cache);
  // Appends one segment of 1..n·L octets, then drops what the window no longer holds; throws
  // std::invalid_argument otherwise, once final, or on a file stream. entry: a peer joining live may
  // start at it (it begins at a keyframe, or the media has no such structure).
  void append(std::span<const std::uint8_t> data, bool entry = true);
  void finish() { final_ = true; }
  void set_window(LiveWindow window) { window_ = window; }
  // A live source's measured bitrate as it changes (paced sessions follow it).
  void set_bitrate(std::uint64_t bitrate) { info_.bitrate = bitrate; }

  const StreamInfo& info() const override { return info_; }
  std::uint32_t segment_count() const override {
    return file_ ? file_->count() : static_cast<std::uint32_t>(descriptors_.size());
  }
  std::uint32_t first_segment() const override { return first_; }
  bool final() const override { return final_; }
  // The newest entry segment the window still holds, else the window's first.
  std::uint32_t live_edge() const override { return std::max(live_edge_, first_); }
  const proto::SegmentDescriptor& descriptor(std::uint32_t segment) const override {
    return file_ ? file_->descriptor(segment) : descriptors_.at(segment);
  }
  std::size_t rank(std::uint32_t segment) const override;
  bool can_send_systematic() const override { return true; }
  bool write_systematic(std::uint32_t segment, std::uint32_t i, proto::Writer& w) override;
  bool write_coded(std::uint32_t segment, std::uint32_t j, proto::Writer& w) override;

  // The segment now (a file's block is read if the cache does not hold it; a dropped one has no owner).
  SegmentRef segment(std::uint32_t i) const;
  // The file's segments, or null for an appended (live) stream. Thread-safe.
  const FileSegments* file() const { return file_.get(); }
  CodedCache& cache() const { return cache_; }
  std::uint64_t bytes() const { return file_ ? file_->file_bytes() : bytes_; }
  // Octets of appended segments held now (the live window's content).
  std::uint64_t held_bytes() const { return held_bytes_; }
  std::uint32_t epoch() const { return epoch_; }
  std::size_t segment_bytes() const { return std::size_t{info_.n} * info_.symbol_size; }

  // The generation of segment with its block; used by replicas to describe file segments they read.
  SegmentRef make_ref(std::uint32_t segment, const proto::SegmentDescriptor& d, SegmentBlock block) const;

 private:
  void drop_beyond_window();

  struct Held {
    SegmentBlock block;  // n_s·L, zero padded
    std::chrono::steady_clock::time_point appended;
  };

  StreamInfo info_;
  CodedCache& cache_;
  rlnc::Density density_;
  std::uint64_t seed_;
  std::uint32_t epoch_;  // 1..65535, fresh per process: a restarted server sends new coded symbols
  std::uint64_t cache_base_;
  std::unique_ptr<FileSegments> file_;
  // Appended streams: every segment's descriptor (peers count descriptors from segment 0, so those of
  // dropped segments stay: 36 octets each, in a deque, which grows without a vector's spare half), and
  // the blocks of segments first_ .. count-1.
  std::deque<proto::SegmentDescriptor> descriptors_;
  std::deque<Held> held_;
  std::uint32_t first_ = 0;
  std::uint64_t held_bytes_ = 0;
  LiveWindow window_;
  std::uint64_t bytes_ = 0;
  bool final_ = false;
  std::uint32_t live_edge_ = 0;
};

// The stream id of a name: the first four octets of its SHA-256, so that every server of a stream
// agrees on it without configuration.
std::uint32_t stream_id_of(const std::string& name);

}  // namespace ncast::server
