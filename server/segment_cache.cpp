#include "server/segment_cache.hpp"

#include <stdexcept>

namespace ncast::server {

SegmentCache::SegmentCache(Backend backend, std::size_t budget_bytes) : backend_(backend), budget_(budget_bytes) {
  if (budget_ == 0) throw std::invalid_argument("segment cache: the budget must be positive");
}

SegmentBlock SegmentCache::touch(Entry& e) {
  if (e.lru != lru_.begin()) lru_.splice(lru_.begin(), lru_, e.lru);
  return e.block;
}

void SegmentCache::make_room(std::size_t bytes) {
  // The newest block is always kept, even one larger than the budget.
  while (!lru_.empty() && stats_.bytes + bytes > budget_) {
    const auto it = entries_.find(lru_.back());
    std::shared_ptr<HostBuffer>& victim = it->second.block;
    stats_.bytes -= victim->size();
    --stats_.blocks;
    ++stats_.evictions;
    // Only the cache can hand out new references, and it is locked: a unique block is nobody's now.
    // Page-locked allocations are slow, so one is kept for the next read.
    if (victim.use_count() == 1) spare_ = std::move(*victim);
    lru_.pop_back();
    entries_.erase(it);
  }
}

HostBuffer SegmentCache::take_buffer(std::size_t bytes) {
  if (spare_.data() && spare_.size() == bytes) return std::move(spare_);
  return allocate_host(backend_, bytes);
}

SegmentBlock SegmentCache::get(std::uint64_t key, std::size_t bytes, const std::function<void(HostBuffer&)>& fill) {
  HostBuffer buffer;
  {
    std::lock_guard lock(mutex_);
    if (auto it = entries_.find(key); it != entries_.end()) {
      ++stats_.hits;
      return touch(it->second);
    }
    ++stats_.misses;
    make_room(bytes);
    buffer = take_buffer(bytes);
  }
  fill(buffer);
  std::lock_guard lock(mutex_);
  // Another thread may have read the same block meanwhile: keep one.
  if (auto it = entries_.find(key); it != entries_.end()) return touch(it->second);
  make_room(bytes);
  lru_.push_front(key);
  auto block = std::make_shared<HostBuffer>(std::move(buffer));
  entries_.emplace(key, Entry{block, lru_.begin()});
  stats_.bytes += bytes;
  ++stats_.blocks;
  return block;
}

SegmentBlock SegmentCache::peek(std::uint64_t key) const {
  std::lock_guard lock(mutex_);
  const auto it = entries_.find(key);
  return it == entries_.end() ? nullptr : it->second.block;
}

SegmentCacheStats SegmentCache::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

}  // namespace ncast::server
