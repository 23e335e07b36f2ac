#pragma once
// A set of shard indices of one stripe (at most 256 shards in GF(2^8)).
#include <bitset>
#include <cstddef>

namespace ncast::rs {

inline constexpr std::size_t kMaxShards = 256;
using ShardSet = std::bitset<kMaxShards>;

}  // namespace ncast::rs
