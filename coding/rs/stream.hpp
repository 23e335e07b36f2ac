#pragma once
// Coding of shards far larger than memory: one slice (the same byte range of every shard) at a time,
// in buffers allocated once, so memory use is (k + m) × slice_bytes whatever the shard size. The
// callbacks do the I/O; within a shard they see offsets in increasing order, so sequential streams
// (pipes, sockets) work as well as files.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>

#include "coding/host_memory.hpp"
#include "coding/rs/codec.hpp"
#include "coding/rs/shard_set.hpp"

namespace ncast::rs {

// Bytes [offset, offset + len) of every shard.
struct Slice {
  std::uint64_t offset = 0;
  std::size_t len = 0;
  std::span<std::uint8_t* const> shards;  // k + m buffers of len bytes
  // For a read callback: the shards to fill. For a write callback: the shards that hold valid bytes.
  ShardSet active;
};

using SliceFn = std::function<void(const Slice&)>;

class StreamCoder {
 public:
  // slice_bytes 0 picks default_slice_bytes for the codec.
  explicit StreamCoder(const Codec& codec, std::size_t slice_bytes = 0);

  // Up to 1 MiB per shard, less for wide codes so that all slices together stay near 32 MiB.
  static std::size_t default_slice_bytes(std::size_t shard_count);
  std::size_t slice_bytes() const { return slice_; }

  // For each slice: read fills the k data shards, the codec adds parity, write gets all k + m.
  void encode(std::uint64_t shard_size, const SliceFn& read, const SliceFn& write);
  // For each slice: read fills the k survivors the codec reads (the lowest-numbered shards not
  // erased), the codec rebuilds the erased shards listed in wanted, write gets survivors and rebuilt
  // shards. Throws Unrecoverable before any callback when more than m shards are erased.
  void reconstruct(std::uint64_t shard_size, std::span<const std::size_t> erased, std::span<const std::size_t> wanted,
                   const SliceFn& read, const SliceFn& write);

 private:
  const Codec& codec_;
  std::size_t slice_;
  HostBuffer memory_;
  std::vector<std::uint8_t*> ptrs_;
};

}  // namespace ncast::rs
