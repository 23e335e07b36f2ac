#pragma once
// The decode rows of recently seen erasure patterns, so that repeated reconstruction of the same
// pattern (a failed disk, a lost node) costs one region product and no matrix inversion. Bounded:
// the least recently used pattern goes when a new one would exceed the capacity.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "coding/rs/shard_set.hpp"

namespace ncast::rs {

// Which k shards are read and which shards are rebuilt determine the decode rows.
struct DecodeKey {
  ShardSet sources;
  ShardSet outputs;
  bool operator==(const DecodeKey&) const = default;
};

struct DecodeKeyHash {
  std::size_t operator()(const DecodeKey& key) const noexcept {
    const std::size_t a = std::hash<ShardSet>{}(key.sources), b = std::hash<ShardSet>{}(key.outputs);
    return a ^ (b + 0x9e3779b97f4a7c15ULL + (a << 6) + (a >> 2));
  }
};

// Row-major |outputs| × k coefficients, outputs and columns in the order of the plan that computed them
// (decode_plan.hpp: walk_like_encode). Shared, so an entry evicted while a caller still uses it stays alive.
using DecodeRows = std::shared_ptr<const std::vector<std::uint8_t>>;

// Thread-safe. A lookup that hits takes a lock and bumps a reference count; it never allocates.
class DecodeCache {
 public:
  // capacity 0 keeps nothing: every lookup misses.
  explicit DecodeCache(std::size_t capacity);

  // The rows cached for key (now the most recently used), or null.
  DecodeRows find(const DecodeKey& key);
  // Caches rows for key unless another thread got there first; returns the cached rows.
  DecodeRows insert(const DecodeKey& key, DecodeRows rows);
  void clear();
  // Names this cache and its contents: no other cache has it, and clear() gives a new one. Never 0.
  std::uint64_t stamp() const { return stamp_.load(std::memory_order_relaxed); }
  // A lookup answered outside the cache (RecentPlan) counts as a hit.
  void count_hit() { hits_.fetch_add(1, std::memory_order_relaxed); }

  std::size_t capacity() const { return capacity_; }
  std::size_t size() const;
  std::size_t hits() const;
  std::size_t misses() const;

 private:
  using Entry = std::pair<DecodeKey, DecodeRows>;
  const std::size_t capacity_;
  mutable std::mutex mutex_;
  std::list<Entry> lru_;  // most recently used first
  std::unordered_map<DecodeKey, std::list<Entry>::iterator, DecodeKeyHash> index_;
  std::atomic<std::uint64_t> stamp_;
  std::atomic<std::size_t> hits_ = 0;
  std::size_t misses_ = 0;
};

}  // namespace ncast::rs
