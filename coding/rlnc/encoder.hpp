#pragma once
// The RLNC encoder of one generation. Every symbol it can emit has an id: in systematic mode ids
// 0..n-1 are the source symbols themselves and ids from n on are coded; in non-systematic mode every
// id is coded. A coded symbol's id is its coded-symbol index, so (seed context, id, density) is all
// a seeded symbol needs to carry. Encoding is stateless and the encoder is safe to share between
// threads: any id range can be produced in any order, again and again, with the same result.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "coding/rlnc/coefficients.hpp"
#include "coding/rlnc/generation.hpp"
#include "coding/rlnc/symbol.hpp"

namespace ncast::rlnc {

enum class CoefficientForm : std::uint8_t { seed, explicit_vector };

struct EncoderOptions {
  bool systematic = true;
  Density density{};                             // of coded symbols
  CoefficientForm form = CoefficientForm::seed;  // what produce(id) puts in a coded symbol
};

class Encoder {
 public:
  // block holds the n·L source bytes (symbol i at i·L, padding included) and must outlive the encoder.
  Encoder(const GenerationLayout& layout, std::span<const std::uint8_t> block, const SeedContext& seeds,
          const EncoderOptions& options = {});
  Encoder(const SourceBlock& block, const SeedContext& seeds, const EncoderOptions& options = {})
      : Encoder(block.layout(), block.bytes(), seeds, options) {}

  const GenerationLayout& layout() const { return layout_; }
  const SeedContext& seeds() const { return seeds_; }
  const EncoderOptions& options() const { return options_; }
  SymbolKind kind_of(std::uint32_t id) const;
  const std::uint8_t* source_symbol(std::size_t i) const { return sources_[i]; }

  // Symbols first_id .. first_id+count-1: payload of symbol i to payloads[i] (L bytes); when
  // coefficients is not null, its vector to coefficients[i·n .. i·n+n) (a unit vector for a
  // systematic one). The coded ones are made together, in one pass over the source block.
  void produce(std::uint32_t first_id, std::size_t count, std::uint8_t* const* payloads,
               std::uint8_t* coefficients = nullptr) const;
  // One symbol with its own bytes, its coefficients carried as options().form says.
  CodedSymbol produce(std::uint32_t id) const;

  // Coded symbols with the caller's coefficients: payloads[i] = Σ_j coefficients[i·n + j] · source j.
  void combine(std::span<const std::uint8_t> coefficients, std::uint8_t* const* payloads, std::size_t count) const;

 private:
  void combine_sparse(const std::uint8_t* coefs, std::uint8_t* payload) const;

  GenerationLayout layout_;
  SeedContext seeds_;
  EncoderOptions options_;
  std::vector<const std::uint8_t*> sources_;
};

}  // namespace ncast::rlnc
