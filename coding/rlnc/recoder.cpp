#include "coding/rlnc/recoder.hpp"

#include "coding/region.hpp"
#include "coding/rlnc/error.hpp"

namespace ncast::rlnc {

Recoder::Recoder(const Decoder& node, const SeedContext& seeds) : node_(node), seeds_(seeds) {
  const std::size_t n = node.layout().n();
  payload_srcs_.resize(n);
  coef_srcs_.resize(n);
}

void Recoder::produce(std::size_t count, std::uint8_t* const* payloads, std::uint8_t* coefficients) {
  const std::size_t n = node_.layout().n(), held = node_.rank();
  if (held == 0) throw Error(Errc::nothing_to_recode, "the relay holds nothing of this generation yet");
  // Each mix is a non-zero vector over independent rows, so the result is never the zero vector.
  mix_.resize(count * held);
  coef_dsts_.resize(count);
  for (std::size_t i = 0; i < count; ++i) {
    draw_coefficients(seeds_, next_++, Density::dense(), {mix_.data() + i * held, held});
    coef_dsts_[i] = coefficients + i * n;
  }
  for (std::size_t r = 0; r < held; ++r) {
    payload_srcs_[r] = node_.held_payload(r);
    coef_srcs_[r] = node_.held_coefficients(r);
  }
  const gf::RegionKernels& k = gf::kernels();
  k.dot_multi(payloads, count, payload_srcs_.data(), held, mix_.data(), node_.layout().symbol_size(), false);
  k.dot_multi(coef_dsts_.data(), count, coef_srcs_.data(), held, mix_.data(), n, false);
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
