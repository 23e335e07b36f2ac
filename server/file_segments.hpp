#pragma once
// The segments of a media file, read on demand (video on demand without the file in memory): only the
// file's size is read when it opens, which fixes the segment count and sizes; a segment's octets are
// read with pread into the shared SegmentCache when a sender needs them, and its SHA-256 is computed
// the first time its descriptor is asked for (descriptors go out a window ahead of the data) and kept;
// a block not cached then is read for the hash alone, without taking a place in the cache.
// The file must not change while it is served: a block read again after its eviction would no longer
// match the descriptor peers hold. Thread-safe.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <vector>

#include "protocol/packets.hpp"
#include "server/segment_cache.hpp"

namespace ncast::server {

class FileSegments {
 public:
  // Segments of segment_bytes octets (the last one shorter), blocks zero-padded to n_s·symbol_size and
  // cached under key_base | segment. Throws std::runtime_error naming the file when it cannot be opened
  // or is empty or too large for 2^32 segments.
  FileSegments(const std::filesystem::path& path, std::size_t segment_bytes, std::size_t symbol_size,
               SegmentCache& cache, std::uint64_t key_base);
  ~FileSegments();
  FileSegments(const FileSegments&) = delete;
  FileSegments& operator=(const FileSegments&) = delete;

  std::uint32_t count() const { return static_cast<std::uint32_t>(descriptors_.size()); }
  std::uint64_t file_bytes() const { return file_bytes_; }
  std::uint32_t size_of(std::uint32_t segment) const { return descriptors_.at(segment).size; }
  // Size and SHA-256; the hash is computed (the block read) on the first call for the segment.
  const proto::SegmentDescriptor& descriptor(std::uint32_t segment) const;
  // The segment's padded block, read if the cache does not hold it. Throws std::runtime_error naming the
  // file when the read fails or comes up short (the file shrank).
  SegmentBlock block(std::uint32_t segment) const;

 private:
  // The segment's size_of octets into out.
  void read(std::uint32_t segment, std::uint8_t* out) const;

  std::filesystem::path path_;
  int fd_ = -1;
  std::uint64_t file_bytes_ = 0;
  std::size_t segment_bytes_, symbol_size_;
  SegmentCache& cache_;
  std::uint64_t key_base_;
  mutable std::mutex mutex_;  // guards hashed_ and the hashes in descriptors_
  mutable std::vector<proto::SegmentDescriptor> descriptors_;
  mutable std::vector<bool> hashed_;
};

}  // namespace ncast::server
