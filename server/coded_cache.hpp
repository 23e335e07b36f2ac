#pragma once
// Coded symbols of segments, produced in chunks by a ChunkCoder and shared by every session:
// seeded symbol j of a segment is the same bytes for every peer, so it is coded once however many
// peers receive it (docs/streaming.md, "Coded symbols are shared"). Segments are evicted least
// recently used first when the cache exceeds its byte budget; an evicted chunk is simply coded again,
// bit for bit the same, when asked for.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <unordered_map>
#include <vector>

#include "coding/host_memory.hpp"
#include "server/chunk_coder.hpp"

namespace ncast::server {

struct CacheStats {
  std::uint64_t symbols_coded = 0;  // by the coder
  std::uint64_t engine_calls = 0;
  double engine_seconds = 0;
  std::uint64_t hits = 0, misses = 0, evictions = 0;
  std::size_t bytes = 0;  // held now
};

class CodedCache {
 public:
  static constexpr std::size_t kChunk = 16;  // symbols coded per engine call

  CodedCache(ChunkCoder& coder, std::size_t budget_bytes);

  // The L-octet payload of coded symbol j (< 65536) of g; valid until the next call.
  const std::uint8_t* get(const GenerationRef& g, std::uint32_t j);
  // Drops every chunk of a generation (its segment left the store).
  void forget(std::uint64_t key);

  const CacheStats& stats() const { return stats_; }
  ChunkCoder& coder() { return coder_; }

 private:
  struct Entry {
    std::list<std::uint64_t>::iterator lru;
    std::vector<HostBuffer> chunks;  // chunk c holds symbols c·kChunk .. c·kChunk+kChunk-1, or is empty
  };
  void produce(const GenerationRef& g, std::size_t chunk, HostBuffer& out);
  HostBuffer take_buffer(std::size_t bytes);
  void release(Entry& e);
  void evict_beyond_budget(std::uint64_t keep);

  ChunkCoder& coder_;
  std::size_t budget_;
  std::unordered_map<std::uint64_t, Entry> entries_;
  std::list<std::uint64_t> lru_;                 // front = most recent
  std::multimap<std::size_t, HostBuffer> free_;  // spare chunk buffers by size
  std::size_t free_bytes_ = 0;
  CacheStats stats_;
};

}  // namespace ncast::server
