#pragma once
// The k + m shards of one stripe in a single allocation suited to the codec's backend, each shard
// starting on a 64-byte boundary and, for shard lengths of whole 4 KiB pages, at a different offset in
// its page: what encode and reconstruct take, without assembling pointers by hand.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "coding/host_memory.hpp"
#include "coding/rs/codec.hpp"

namespace ncast::rs {

class Stripe {
 public:
  Stripe(const Codec& codec, std::size_t shard_len);

  std::size_t shard_len() const { return len_; }
  std::size_t shard_count() const { return ptrs_.size(); }
  std::uint8_t* shard(std::size_t i) const { return ptrs_.at(i); }
  std::span<std::uint8_t* const> shards() const { return ptrs_; }

 private:
  std::size_t len_;
  HostBuffer memory_;
  std::vector<std::uint8_t*> ptrs_;
};

}  // namespace ncast::rs
