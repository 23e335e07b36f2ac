#pragma once
// How a peer decodes a segment: the CPU progressive decoder (rlnc::Decoder), or in CUDA builds the
// GPU one (gpu::ProgressiveDecoder), chosen by `ncast-peer --decoder`. The receiver sees only this
// seam, so the peer layer builds without CUDA; decoder_factory.hpp picks the implementation.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "coding/rlnc/decoder.hpp"

namespace ncast::peer {

// One segment's decoder.
class SegmentDecoder {
 public:
  virtual ~SegmentDecoder() = default;
  // As rlnc::Decoder::add: innovative or not; a corrupt symbol throws rlnc::Error and changes nothing.
  virtual rlnc::AddResult add(const rlnc::SymbolView& symbol) = 0;
  // Forgets everything received.
  virtual void reset() = 0;
  virtual const rlnc::GenerationLayout& layout() const = 0;
  virtual std::size_t rank() const = 0;
  bool complete() const { return rank() == layout().n(); }
  // The segment's bytes (layout().data_bytes()) in host memory once complete, valid until the next
  // add() or reset(); rlnc::Error(not_decoded) before.
  virtual std::span<const std::uint8_t> data() = 0;
  // Whether data() answers without waiting. A batched decoder (decode_batcher.hpp) is complete at
  // full rank but decodes later, together with other generations; the others decode as they go.
  virtual bool data_ready() const { return complete(); }
  // A counting decoder (counting_decoder.hpp) tracks the rank alone and has no data: its segment is
  // complete at full rank, with nothing to verify or write.
  virtual bool counts_only() const { return false; }
  // The CPU decoder holding the received rows, which a relay recodes from; null when the rows live
  // elsewhere (on the GPU).
  virtual const rlnc::Decoder* host_rows() const = 0;
};

// Makes the decoders of one receiver's segments.
class DecoderFactory {
 public:
  virtual ~DecoderFactory() = default;
  // "cpu avx512-gfni", "gpu NVIDIA H100 80GB HBM3 (sm_90, …)": for the report.
  virtual std::string description() const = 0;
  virtual std::unique_ptr<SegmentDecoder> open(const rlnc::GenerationLayout& layout,
                                               const rlnc::SeedContext& seeds) = 0;
};

// The CPU decoder, available in every build.
std::unique_ptr<DecoderFactory> make_cpu_decoder_factory();

// A CPU decoder that holds `data` (a complete segment's bytes, shorter than n·L by the padding) as
// its n source symbols: what a relay recodes from once a segment decoded elsewhere is verified.
std::unique_ptr<SegmentDecoder> host_decoder_of(const rlnc::GenerationLayout& layout, const rlnc::SeedContext& seeds,
                                                std::span<const std::uint8_t> data);

// ncast-peer --decoder: cpu, gpu (fails without a usable CUDA device), auto (the GPU when one is usable).
enum class DecoderChoice { cpu, gpu, automatic };
std::string_view to_string(DecoderChoice choice);
std::optional<DecoderChoice> parse_decoder_choice(std::string_view name);

}  // namespace ncast::peer
