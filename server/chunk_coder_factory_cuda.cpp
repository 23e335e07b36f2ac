// make_chunk_coder() of CUDA builds: segments resident in GPU memory, coded by the batched GPU encoder.
#include <map>

#include "gpu/batch_encoder.hpp"
#include "gpu/segment_store.hpp"
#include "server/chunk_coder.hpp"

namespace ncast::server {
namespace {

class ResidentChunkCoder final : public ChunkCoder {
 public:
  ResidentChunkCoder(Engine& engine, std::size_t device_budget) : engine_(engine), store_(device_budget, {}) {}
  Backend backend() const override { return Backend::cuda; }
  std::string description() const override { return "gpu resident segments, " + engine_.description(); }

  void add(const GenerationRef& g) override { put(g); }

  void code(const GenerationRef& g, std::uint32_t first, std::size_t count, std::uint8_t* out) override {
    // A segment the store evicted (its budget is smaller than the stream) is uploaded again.
    if (!store_.find(key(g))) put(g);
    requests_.resize(count);
    for (std::size_t i = 0; i < count; ++i)
      requests_[i] = {key(g), (g.epoch << 16) | (first + static_cast<std::uint32_t>(i))};
    encoder(g.density).encode(requests_, out, g.symbol_size);
  }

 private:
  static gpu::SegmentKey key(const GenerationRef& g) { return {g.key >> 32, static_cast<std::uint32_t>(g.key)}; }
  void put(const GenerationRef& g) {
    store_.put(key(g), rlnc::GenerationLayout(g.n_s, g.symbol_size, g.data_bytes), {g.block, g.n_s * g.symbol_size},
               g.seeds);
  }
  gpu::BatchEncoder& encoder(rlnc::Density density) {
    auto& e = encoders_[density.threshold()];
    if (!e) {
      rlnc::EncoderOptions options;
      options.systematic = true;  // coded indices are ≥ 65536 > n: all of them draw seeded vectors
      options.density = density;
      e = std::make_unique<gpu::BatchEncoder>(store_, options);
    }
    return *e;
  }

  Engine& engine_;
  gpu::SegmentStore store_;
  std::map<std::uint32_t, std::unique_ptr<gpu::BatchEncoder>> encoders_;
  std::vector<gpu::EncodeRequest> requests_;
};

}  // namespace

std::unique_ptr<ChunkCoder> make_chunk_coder(Engine& engine, std::size_t device_budget, bool resident) {
  if (resident && engine.backend() == Backend::cuda) return std::make_unique<ResidentChunkCoder>(engine, device_budget);
  return make_engine_chunk_coder(engine);
}

}  // namespace ncast::server
