#include "coding/rlnc/symbol.hpp"

#include <algorithm>
#include <string>

#include "coding/rlnc/error.hpp"

namespace ncast::rlnc {

std::string_view to_string(SymbolKind kind) {
  switch (kind) {
    case SymbolKind::systematic: return "systematic";
    case SymbolKind::coded: return "coded";
    case SymbolKind::recoded: return "recoded";
  }
  return "unknown";
}

void resolve_coefficients(const SymbolView& symbol, const GenerationLayout& layout, const SeedContext& seeds,
                          std::span<std::uint8_t> out) {
  const std::size_t n = layout.n();
  if (out.size() < n) throw Error(Errc::buffer_too_small, "coefficient buffer is smaller than n");
  if (symbol.payload.size() != layout.symbol_size())
    throw Error(Errc::wrong_payload_length, "payload of " + std::to_string(symbol.payload.size()) +
                                                " bytes, the symbol size is " + std::to_string(layout.symbol_size()));
  switch (symbol.kind) {
    case SymbolKind::systematic:
      if (!symbol.coefficients.empty()) throw Error(Errc::bad_kind, "a systematic symbol carries no coefficients");
      if (symbol.index >= n)
        throw Error(Errc::index_out_of_range,
                    "systematic index " + std::to_string(symbol.index) + " is not below n=" + std::to_string(n));
      std::fill_n(out.begin(), n, std::uint8_t{0});
      out[symbol.index] = 1;
      return;
    case SymbolKind::coded:
      if (symbol.seeded()) {
        draw_coefficients(seeds, symbol.index, symbol.density, out.first(n));
        return;
      }
      break;
    case SymbolKind::recoded:
      if (symbol.coefficients.empty()) throw Error(Errc::bad_kind, "a recoded symbol must carry its coefficients");
      break;
    default: throw Error(Errc::bad_kind, "unknown symbol kind " + std::to_string(static_cast<int>(symbol.kind)));
  }
  if (symbol.coefficients.size() != n)
    throw Error(Errc::wrong_coefficient_count, std::to_string(symbol.coefficients.size()) +
                                                   " coefficients for a generation of n=" + std::to_string(n));
  if (std::all_of(symbol.coefficients.begin(), symbol.coefficients.end(), [](std::uint8_t c) { return c == 0; }))
    throw Error(Errc::zero_coefficients, "the coefficient vector is all zero");
  std::copy(symbol.coefficients.begin(), symbol.coefficients.end(), out.begin());
}

}  // namespace ncast::rlnc
