#pragma once
// A ChunkCoder shared by threads: each call holds a mutex. Coders keep scratch space (and the GPU
// coder its streams and segment store), so calls must not overlap; they come only on coded-cache
// misses (one call per kChunk symbols of a segment and thread), never per packet.
#include <mutex>

#include "server/chunk_coder.hpp"

namespace ncast::server {

class LockedChunkCoder final : public ChunkCoder {
 public:
  explicit LockedChunkCoder(ChunkCoder& inner) : inner_(inner) {}
  Backend backend() const override { return inner_.backend(); }
  std::string description() const override { return inner_.description(); }
  void add(const GenerationRef& g) override {
    std::lock_guard lock(mutex_);
    inner_.add(g);
  }
  void code(const GenerationRef& g, std::uint32_t first, std::size_t count, std::uint8_t* out) override {
    std::lock_guard lock(mutex_);
    inner_.code(g, first, count, out);
  }

 private:
  ChunkCoder& inner_;
  std::mutex mutex_;
};

}  // namespace ncast::server
