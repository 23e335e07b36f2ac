#include "coding/rs/stream.hpp"

#include <algorithm>

namespace ncast::rs {

std::size_t StreamCoder::default_slice_bytes(std::size_t shard_count) {
  constexpr std::size_t kBudget = 32 << 20, kMax = 1 << 20, kMin = 64 << 10;
  const std::size_t per_shard = kBudget / std::max<std::size_t>(shard_count, 1);
  return std::clamp(per_shard / 4096 * 4096, kMin, kMax);
}

StreamCoder::StreamCoder(const Codec& codec, std::size_t slice_bytes)
    : codec_(codec), slice_(slice_bytes ? slice_bytes : default_slice_bytes(codec.total_shards())) {
  const std::size_t stride = (slice_ + kHostAlignment - 1) / kHostAlignment * kHostAlignment;
  memory_ = codec.allocate(stride * codec.total_shards());
  for (std::size_t i = 0; i < codec.total_shards(); ++i) ptrs_.push_back(memory_.data() + i * stride);
}

void StreamCoder::encode(std::uint64_t shard_size, const SliceFn& read, const SliceFn& write) {
  const std::size_t k = codec_.data_shards();
  Slice slice{0, 0, ptrs_, {}};
  ShardSet data, all;
  for (std::size_t i = 0; i < codec_.total_shards(); ++i) {
    all.set(i);
    if (i < k) data.set(i);
  }
  for (std::uint64_t off = 0; off < shard_size; off += slice_) {
    slice.offset = off;
    slice.len = static_cast<std::size_t>(std::min<std::uint64_t>(slice_, shard_size - off));
    slice.active = data;
    read(slice);
    codec_.encode(slice.shards, slice.len);
    slice.active = all;
    write(slice);
  }
}

void StreamCoder::reconstruct(std::uint64_t shard_size, std::span<const std::size_t> erased,
                              std::span<const std::size_t> wanted, const SliceFn& read, const SliceFn& write) {
  const ShardSet sources = codec_.sources_for(erased);
  ShardSet lost, valid = sources;
  for (std::size_t e : erased) lost.set(e);
  for (std::size_t w : wanted)
    if (w < codec_.total_shards() && lost.test(w)) valid.set(w);
  Slice slice{0, 0, ptrs_, {}};
  for (std::uint64_t off = 0; off < shard_size; off += slice_) {
    slice.offset = off;
    slice.len = static_cast<std::size_t>(std::min<std::uint64_t>(slice_, shard_size - off));
    slice.active = sources;
    read(slice);
    codec_.reconstruct(slice.shards, slice.len, erased, wanted);
    slice.active = valid;
    write(slice);
  }
}

}  // namespace ncast::rs
