#include "coding/rs/decode_cache.hpp"

namespace ncast::rs {
namespace {

std::uint64_t next_stamp() {
  static std::atomic<std::uint64_t> last{0};
  return last.fetch_add(1, std::memory_order_relaxed) + 1;
}

}  // namespace

DecodeCache::DecodeCache(std::size_t capacity) : capacity_(capacity), stamp_(next_stamp()) {}

DecodeRows DecodeCache::find(const DecodeKey& key) {
  std::lock_guard lock(mutex_);
  // A lost disk or node repeats one pattern call after call: compare with the latest entry before
  // hashing the two 256-bit sets, which cost as much as a 4 KiB shard's multiply of a narrow code.
  if (!lru_.empty() && lru_.front().first == key) {
    count_hit();
    return lru_.front().second;
  }
  const auto it = index_.find(key);
  if (it == index_.end()) {
    ++misses_;
    return nullptr;
  }
  count_hit();
  lru_.splice(lru_.begin(), lru_, it->second);
  return it->second->second;
}

DecodeRows DecodeCache::insert(const DecodeKey& key, DecodeRows rows) {
  if (capacity_ == 0) return rows;
  std::lock_guard lock(mutex_);
  if (const auto it = index_.find(key); it != index_.end()) {
    lru_.splice(lru_.begin(), lru_, it->second);
    return it->second->second;
  }
  if (lru_.size() == capacity_) {
    index_.erase(lru_.back().first);
    lru_.pop_back();
  }
  lru_.emplace_front(key, std::move(rows));
  index_.emplace(key, lru_.begin());
  return lru_.front().second;
}

void DecodeCache::clear() {
  std::lock_guard lock(mutex_);
  lru_.clear();
  index_.clear();
  stamp_.store(next_stamp(), std::memory_order_relaxed);
}

std::size_t DecodeCache::size() const {
  std::lock_guard lock(mutex_);
  return lru_.size();
}

std::size_t DecodeCache::hits() const { return hits_.load(std::memory_order_relaxed); }

std::size_t DecodeCache::misses() const {
  std::lock_guard lock(mutex_);
  return misses_;
}

}  // namespace ncast::rs
