#include <vector>

#include "server/chunk_coder.hpp"

namespace ncast::server {
namespace {

class EngineChunkCoder final : public ChunkCoder {
 public:
  explicit EngineChunkCoder(Engine& engine) : engine_(engine) {}
  Backend backend() const override { return engine_.backend(); }
  std::string description() const override { return "engine " + engine_.description(); }
  void add(const GenerationRef&) override {}

  void code(const GenerationRef& g, std::uint32_t first, std::size_t count, std::uint8_t* out) override {
    const std::size_t n = g.n_s, L = g.symbol_size;
    coefs_.resize(count * n);
    for (std::size_t i = 0; i < count; ++i)
      rlnc::draw_coefficients(g.seeds, (g.epoch << 16) | (first + static_cast<std::uint32_t>(i)), g.density,
                              {coefs_.data() + i * n, n});
    ins_.resize(n);
    for (std::size_t s = 0; s < n; ++s) ins_[s] = g.block + s * L;
    outs_.resize(count);
    for (std::size_t i = 0; i < count; ++i) outs_[i] = out + i * L;
    engine_.multiply(coefs_.data(), count, n, ins_.data(), outs_.data(), L, false);
  }

 private:
  Engine& engine_;
  std::vector<std::uint8_t> coefs_;
  std::vector<const std::uint8_t*> ins_;
  std::vector<std::uint8_t*> outs_;
};

}  // namespace

std::unique_ptr<ChunkCoder> make_engine_chunk_coder(Engine& engine) {
  return std::make_unique<EngineChunkCoder>(engine);
}

}  // namespace ncast::server
