#include "peer/wire_symbol.hpp"

#include <algorithm>

#include "coding/rlnc/coefficients.hpp"

namespace ncast::peer {

CodecSymbol codec_symbol(const proto::CodedView& v, std::uint32_t server_id, std::uint32_t stream_id, std::size_t n_s,
                         std::span<std::uint8_t> scratch) {
  const std::span<std::uint8_t> drawn = scratch.first(n_s);
  CodecSymbol s;
  s.view.payload = v.payload;
  switch (v.header.kind) {
    case proto::WireKind::systematic:
      s.view.kind = rlnc::SymbolKind::systematic;
      s.view.index = v.header.index;
      // An index past n_s keeps the zero row: the decoder refuses the symbol.
      std::fill(drawn.begin(), drawn.end(), std::uint8_t{0});
      if (v.header.index < n_s) drawn[v.header.index] = 1;
      s.coefficients = drawn;
      break;
    case proto::WireKind::seeded:
      s.view.kind = rlnc::SymbolKind::coded;
      rlnc::draw_coefficients({rlnc::coefficient_seed(server_id, stream_id), v.header.segment}, v.header.index,
                              rlnc::Density::from_threshold(std::uint32_t{v.header.density} + 1), drawn);
      s.view.coefficients = drawn;
      s.coefficients = drawn;
      break;
    case proto::WireKind::explicit_coded:
      s.view.kind = rlnc::SymbolKind::coded;
      s.view.coefficients = v.coefficients;
      s.coefficients = v.coefficients;
      break;
    case proto::WireKind::recoded:
      s.view.kind = rlnc::SymbolKind::recoded;
      s.view.coefficients = v.coefficients;
      s.coefficients = v.coefficients;
      break;
  }
  return s;
}

}  // namespace ncast::peer
