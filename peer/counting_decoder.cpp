#include "peer/counting_decoder.hpp"

#include <vector>

#include "coding/rlnc/error.hpp"
#include "coding/rlnc/rank_tracker.hpp"

namespace ncast::peer {
namespace {

class CountingSegmentDecoder final : public SegmentDecoder {
 public:
  CountingSegmentDecoder(const rlnc::GenerationLayout& layout, const rlnc::SeedContext& seeds)
      : layout_(layout), seeds_(seeds), ranks_(layout.n()), coefs_(layout.n()) {}

  rlnc::AddResult add(const rlnc::SymbolView& symbol) override {
    // Checked against the layout as the CPU decoder checks it: the same symbols are refused.
    rlnc::resolve_coefficients(symbol, layout_, seeds_, coefs_);
    return ranks_.add(coefs_);
  }
  void reset() override { ranks_.reset(); }
  const rlnc::GenerationLayout& layout() const override { return layout_; }
  std::size_t rank() const override { return ranks_.rank(); }
  bool counts_only() const override { return true; }
  std::span<const std::uint8_t> data() override {
    throw rlnc::Error(rlnc::Errc::not_decoded, "a counting decoder holds no data");
  }
  const rlnc::Decoder* host_rows() const override { return nullptr; }

 private:
  rlnc::GenerationLayout layout_;
  rlnc::SeedContext seeds_;
  rlnc::RankTracker ranks_;
  std::vector<std::uint8_t> coefs_;
};

class CountingDecoderFactory final : public DecoderFactory {
 public:
  std::string description() const override { return "counting (rank from coefficients, no payload)"; }
  std::unique_ptr<SegmentDecoder> open(const rlnc::GenerationLayout& layout, const rlnc::SeedContext& seeds) override {
    return std::make_unique<CountingSegmentDecoder>(layout, seeds);
  }
};

}  // namespace

std::unique_ptr<DecoderFactory> make_counting_decoder_factory() { return std::make_unique<CountingDecoderFactory>(); }

}  // namespace ncast::peer
