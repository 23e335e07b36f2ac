#pragma once
// Source blocks of file segments in host memory, read on demand and bounded by a byte budget
// (ncast-server --host-memory-mb): the least recently used block goes first when a new one would not
// fit, as in the GPU's segment store. Blocks are shared: a sender that holds one (coding from it,
// uploading it) keeps it alive after its eviction, so eviction never leaves a pointer dangling; the
// memory of such a block returns when its last holder lets go. Thread-safe: every server thread reads
// through one cache.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "coding/host_memory.hpp"

namespace ncast::server {

using SegmentBlock = std::shared_ptr<const HostBuffer>;

struct SegmentCacheStats {
  std::uint64_t hits = 0, misses = 0, evictions = 0;
  std::size_t bytes = 0;   // held by the cache now
  std::size_t blocks = 0;  // likewise
};

class SegmentCache {
 public:
  // Blocks are host memory suited to backend (page-locked for CUDA); budget_bytes ≥ 1.
  SegmentCache(Backend backend, std::size_t budget_bytes);

  // The block of key, of `bytes` octets; on a miss, fill(buffer) reads it (outside the cache's lock, so
  // other threads are not held up by the read). fill's exceptions reach the caller, nothing is cached.
  SegmentBlock get(std::uint64_t key, std::size_t bytes, const std::function<void(HostBuffer&)>& fill);

  // The block of key if the cache holds it (its place in the LRU order unchanged), else null.
  SegmentBlock peek(std::uint64_t key) const;

  SegmentCacheStats stats() const;
  std::size_t budget() const { return budget_; }

 private:
  struct Entry {
    std::shared_ptr<HostBuffer> block;
    std::list<std::uint64_t>::iterator lru;
  };
  HostBuffer take_buffer(std::size_t bytes);  // mutex_ held
  void make_room(std::size_t bytes);          // mutex_ held
  SegmentBlock touch(Entry& e);               // mutex_ held

  Backend backend_;
  std::size_t budget_;
  mutable std::mutex mutex_;
  std::unordered_map<std::uint64_t, Entry> entries_;
  std::list<std::uint64_t> lru_;  // front = most recent
  HostBuffer spare_;              // an evicted block no one held, kept for the next read of its size
  SegmentCacheStats stats_;
};

}  // namespace ncast::server
