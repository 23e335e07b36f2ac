#include "coding/rlnc/recoder.hpp"

#include "coding/rlnc/error.hpp"

namespace ncast::rlnc {

Recoder::Recoder(const Decoder& node, const SeedContext& seeds) : node_(node), seeds_(seeds) {}

void Recoder::produce(std::size_t count, std::uint8_t* const* payloads, std::uint8_t* coefficients) {
  const std::size_t held = node_.rank();
  if (held == 0) throw Error(Errc::nothing_to_recode, "the relay holds nothing of this generation yet");
  // Each mix is a non-zero vector over independent rows, so no result is the zero vector.
  mix_.resize(count * held);
  for (std::size_t i = 0; i < count; ++i)
    draw_coefficients(seeds_, next_++, Density::dense(), {mix_.data() + i * held, held});
  node_.combine_held(mix_.data(), count, payloads, coefficients);
}

CodedSymbol Recoder::produce() {
  CodedSymbol s;
  s.kind = SymbolKind::recoded;
  s.index = next_;
  s.payload.resize(node_.layout().symbol_size());
  s.coefficients.resize(node_.layout().n());
  std::uint8_t* out = s.payload.data();
  produce(1, &out, s.coefficients.data());
  return s;
}

}  // namespace ncast::rlnc
