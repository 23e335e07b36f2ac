#pragma once
// A coded symbol: one payload of L bytes plus what says which combination of the source symbols it is.
//   systematic  source symbol `index` itself (no coefficients travel);
//   coded       a fresh combination from the source, either seeded (coefficients empty: they are
//               drawn from the generation's SeedContext, `index` and `density`) or explicit;
//   recoded     a combination made by a relay from what it holds; coefficients always explicit,
//               expressed over the source symbols (n bytes), so any sink can use them.
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "coding/rlnc/coefficients.hpp"
#include "coding/rlnc/generation.hpp"

namespace ncast::rlnc {

enum class SymbolKind : std::uint8_t { systematic, coded, recoded };

std::string_view to_string(SymbolKind kind);

// Borrowed view of a symbol: what the decoder reads and the encoder fills.
struct SymbolView {
  SymbolKind kind = SymbolKind::coded;
  std::uint32_t index = 0;                     // systematic: source index; seeded coded: coded-symbol index
  Density density;                             // seeded coded only
  std::span<const std::uint8_t> coefficients;  // explicit coefficients (n bytes) or empty
  std::span<const std::uint8_t> payload;       // L bytes

  bool seeded() const { return kind == SymbolKind::coded && coefficients.empty(); }
};

// A symbol that owns its bytes.
struct CodedSymbol {
  SymbolKind kind = SymbolKind::coded;
  std::uint32_t index = 0;
  Density density;
  std::vector<std::uint8_t> coefficients;
  std::vector<std::uint8_t> payload;

  SymbolView view() const { return {kind, index, density, coefficients, payload}; }
};

// The coefficient vector of symbol in source space, written to out (layout.n() bytes), after checking
// the symbol against the layout: a payload of the wrong length, explicit coefficients that are not n
// bytes or all zero, a systematic index not below n, or a recoded symbol without coefficients throw
// Error and leave out unspecified.
void resolve_coefficients(const SymbolView& symbol, const GenerationLayout& layout, const SeedContext& seeds,
                          std::span<std::uint8_t> out);

}  // namespace ncast::rlnc
