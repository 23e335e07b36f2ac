#pragma once
// The symbols a receiver meets, for tests that feed two decoders one stream and compare them symbol by
// symbol: a generation's systematic symbols, then seeded dense and sparse, explicit and repeated ones,
// with three corrupt symbols in the middle (a short payload, a systematic index past n, an all-zero
// explicit vector).
#include <algorithm>
#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "coding/rlnc/encoder.hpp"
#include "coding/rlnc/generation.hpp"

namespace ncast::peer::testing {

class SymbolMix {
 public:
  SymbolMix(const rlnc::GenerationLayout& layout, std::span<const std::uint8_t> data, const rlnc::SeedContext& seeds)
      : n_(layout.n()),
        block_(layout, data),
        systematic_(block_, seeds, {.systematic = true}),
        dense_(block_, seeds, {.systematic = false}),
        sparse_(block_, seeds, {.systematic = false, .density = rlnc::Density::from_fraction(0.1)}),
        explicit_(block_, seeds, {.systematic = false, .form = rlnc::CoefficientForm::explicit_vector}) {}

  // Symbol id of the stream; a repeat is one of sent.
  rlnc::CodedSymbol pick(std::uint32_t id, std::mt19937_64& rng, const std::vector<rlnc::CodedSymbol>& sent) const {
    const std::uint64_t kind = rng() % 16;
    rlnc::CodedSymbol s = id < n_                      ? systematic_.produce(id)
                          : kind == 0 && !sent.empty() ? sent[rng() % sent.size()]
                          : kind == 1                  ? sparse_.produce(1000 + id)
                          : kind == 2                  ? explicit_.produce(3000 + id)
                                                       : dense_.produce(1000 + id);
    if (id == n_ / 2) {
      s = dense_.produce(5000);
      s.payload.pop_back();
    } else if (id == n_ / 2 + 1) {
      s = systematic_.produce(0);
      s.index = static_cast<std::uint32_t>(n_);
    } else if (id == n_ / 2 + 2) {
      s = explicit_.produce(5001);
      std::fill(s.coefficients.begin(), s.coefficients.end(), std::uint8_t{0});
    }
    return s;
  }
  bool corrupt(std::uint32_t id) const { return id >= n_ / 2 && id <= n_ / 2 + 2; }
  // A seeded symbol no receiver has met: non-innovative once a decoder is complete.
  rlnc::CodedSymbol fresh() const { return dense_.produce(9000); }

 private:
  std::size_t n_;
  rlnc::SourceBlock block_;
  rlnc::Encoder systematic_, dense_, sparse_, explicit_;
};

}  // namespace ncast::peer::testing
