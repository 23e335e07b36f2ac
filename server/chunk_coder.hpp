#pragma once
// Who computes the coded symbols of the CodedCache. The generic path hands every chunk to the Engine
// over host memory; in CUDA builds, when the engine is the GPU, segments are uploaded once into the
// GPU's segment store when they are added and coded there (coefficients drawn on the device, one
// batched launch per chunk), so only coded payloads cross PCIe. Both give the same bytes.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "coding/backend.hpp"
#include "coding/engine.hpp"
#include "coding/rlnc/coefficients.hpp"

namespace ncast::server {

// One generation as coders need it.
struct GenerationRef {
  std::uint64_t key;          // unique per (stream, segment)
  const std::uint8_t* block;  // n_s·L octets of padded source, in host memory
  std::size_t n_s;
  std::size_t symbol_size;
  std::size_t data_bytes;
  rlnc::SeedContext seeds;
  std::uint32_t epoch;  // coded index = epoch << 16 | j
  rlnc::Density density;
};

class ChunkCoder {
 public:
  virtual ~ChunkCoder() = default;
  // The backend whose host memory suits this coder's buffers.
  virtual Backend backend() const = 0;
  // "engine cpu avx512-gfni", "gpu resident (cuda NVIDIA H100 …)": for logs and /metrics.
  virtual std::string description() const = 0;
  // A new segment: a resident coder uploads it.
  virtual void add(const GenerationRef& g) = 0;
  // Coded symbols j = first .. first+count-1 of g, symbol i to out + i·L.
  virtual void code(const GenerationRef& g, std::uint32_t first, std::size_t count, std::uint8_t* out) = 0;
};

// The engine's multiply over host memory; works with every backend.
std::unique_ptr<ChunkCoder> make_engine_chunk_coder(Engine& engine);

// The best coder for this engine: the resident GPU coder in CUDA builds when the engine is CUDA and
// resident is true (with device_budget bytes of device memory for segments), the engine coder otherwise.
std::unique_ptr<ChunkCoder> make_chunk_coder(Engine& engine, std::size_t device_budget, bool resident = true);

}  // namespace ncast::server
