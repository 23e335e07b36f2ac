#include "server/coded_cache.hpp"

#include <stdexcept>

namespace ncast::server {

CodedCache::CodedCache(ChunkCoder& coder, std::size_t budget_bytes) : coder_(coder), budget_(budget_bytes) {}

HostBuffer CodedCache::take_buffer(std::size_t bytes) {
  auto it = free_.find(bytes);
  if (it != free_.end()) {
    HostBuffer b = std::move(it->second);
    free_.erase(it);
    free_bytes_ -= bytes;
    return b;
  }
  // Page-locked allocations are slow on CUDA, so buffers are recycled rather than freed.
  return allocate_host(coder_.backend(), bytes);
}

void CodedCache::release(Entry& e) {
  for (auto& c : e.chunks) {
    if (!c.data()) continue;
    stats_.bytes -= c.size();
    // Keep a modest pool of spares; the rest goes back to the allocator.
    if (free_bytes_ + c.size() <= budget_ / 8) {
      free_bytes_ += c.size();
      const std::size_t size = c.size();
      free_.emplace(size, std::move(c));
    }
  }
  e.chunks.clear();
}

void CodedCache::forget(std::uint64_t key) {
  auto it = entries_.find(key);
  if (it == entries_.end()) return;
  release(it->second);
  lru_.erase(it->second.lru);
  entries_.erase(it);
}

void CodedCache::evict_beyond_budget(std::uint64_t keep) {
  while (stats_.bytes > budget_ && !lru_.empty()) {
    const std::uint64_t victim = lru_.back();
    if (victim == keep) break;
    forget(victim);
    ++stats_.evictions;
  }
}

void CodedCache::produce(const GenerationRef& g, std::size_t chunk, HostBuffer& out) {
  const auto t0 = std::chrono::steady_clock::now();
  coder_.code(g, static_cast<std::uint32_t>(chunk * kChunk), kChunk, out.data());
  stats_.engine_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ++stats_.engine_calls;
  stats_.symbols_coded += kChunk;
}

const std::uint8_t* CodedCache::get(const GenerationRef& g, std::uint32_t j) {
  if (j >= 65536) throw std::out_of_range("coded symbol beyond the epoch's index space");
  auto [it, inserted] = entries_.try_emplace(g.key);
  Entry& e = it->second;
  if (inserted) {
    lru_.push_front(g.key);
    e.lru = lru_.begin();
  } else if (e.lru != lru_.begin()) {
    lru_.splice(lru_.begin(), lru_, e.lru);
  }
  const std::size_t chunk = j / kChunk;
  if (e.chunks.size() <= chunk) e.chunks.resize(chunk + 1);
  HostBuffer& buf = e.chunks[chunk];
  if (!buf.data()) {
    ++stats_.misses;
    buf = take_buffer(kChunk * g.symbol_size);
    stats_.bytes += buf.size();
    produce(g, chunk, buf);
    evict_beyond_budget(g.key);
  } else {
    ++stats_.hits;
  }
  return buf.data() + (j % kChunk) * g.symbol_size;
}

}  // namespace ncast::server
