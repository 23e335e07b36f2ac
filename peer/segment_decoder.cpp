#include "peer/segment_decoder.hpp"

#include <algorithm>
#include <vector>

#include "coding/region.hpp"
#include "coding/simd_level.hpp"

namespace ncast::peer {
namespace {

class CpuSegmentDecoder final : public SegmentDecoder {
 public:
  CpuSegmentDecoder(const rlnc::GenerationLayout& layout, const rlnc::SeedContext& seeds)
      : buffer_(layout.block_bytes()), decoder_(layout, buffer_, seeds) {}

  rlnc::AddResult add(const rlnc::SymbolView& symbol) override { return decoder_.add(symbol); }
  void reset() override { decoder_.reset(); }
  const rlnc::GenerationLayout& layout() const override { return decoder_.layout(); }
  std::size_t rank() const override { return decoder_.rank(); }
  std::span<const std::uint8_t> data() override { return decoder_.data(); }
  const rlnc::Decoder* host_rows() const override { return &decoder_; }

 private:
  std::vector<std::uint8_t> buffer_;
  rlnc::Decoder decoder_;
};

class CpuDecoderFactory final : public DecoderFactory {
 public:
  std::string description() const override { return "cpu " + std::string(gf::to_string(gf::kernels().level)); }
  std::unique_ptr<SegmentDecoder> open(const rlnc::GenerationLayout& layout, const rlnc::SeedContext& seeds) override {
    return std::make_unique<CpuSegmentDecoder>(layout, seeds);
  }
};

}  // namespace

std::unique_ptr<DecoderFactory> make_cpu_decoder_factory() { return std::make_unique<CpuDecoderFactory>(); }

std::unique_ptr<SegmentDecoder> host_decoder_of(const rlnc::GenerationLayout& layout, const rlnc::SeedContext& seeds,
                                                std::span<const std::uint8_t> data) {
  auto decoder = std::make_unique<CpuSegmentDecoder>(layout, seeds);
  // The source block as every encoder pads it: the data, then zeros.
  const std::size_t L = layout.symbol_size();
  std::vector<std::uint8_t> symbol(L);
  for (std::size_t i = 0; i < layout.n(); ++i) {
    const std::size_t from = std::min(data.size(), i * L), to = std::min(data.size(), from + L);
    std::fill(std::copy(data.begin() + static_cast<long>(from), data.begin() + static_cast<long>(to), symbol.begin()),
              symbol.end(), std::uint8_t{0});
    decoder->add({rlnc::SymbolKind::systematic, static_cast<std::uint32_t>(i), {}, {}, symbol});
  }
  return decoder;
}

std::string_view to_string(DecoderChoice choice) {
  switch (choice) {
    case DecoderChoice::cpu: return "cpu";
    case DecoderChoice::gpu: return "gpu";
    case DecoderChoice::automatic: return "auto";
  }
  return "unknown";
}

std::optional<DecoderChoice> parse_decoder_choice(std::string_view name) {
  for (DecoderChoice c : {DecoderChoice::cpu, DecoderChoice::gpu, DecoderChoice::automatic})
    if (name == to_string(c)) return c;
  return std::nullopt;
}

}  // namespace ncast::peer
