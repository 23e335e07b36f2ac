#pragma once
// Recoding at a relay: new coded symbols as random combinations of whatever the relay's decoder holds
// (its rank-many rows, decoded or not), so a relay forwards useful symbols long before it could
// decode. Their coefficients are explicit and expressed over the source symbols, so any sink decodes
// them like any other symbol.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "coding/rlnc/coefficients.hpp"
#include "coding/rlnc/decoder.hpp"
#include "coding/rlnc/symbol.hpp"

namespace ncast::rlnc {

class Recoder {
 public:
  // Mixes what node holds with dense non-zero vectors drawn from seeds (the relay's own seed, so that
  // relays do not repeat each other's combinations), the k-th emitted symbol using index k.
  Recoder(const Decoder& node, const SeedContext& seeds);

  // count recoded symbols: payloads[i] gets L bytes and coefficients[i·n .. i·n+n) the vector over
  // the source symbols. Throws Error(nothing_to_recode) while the node holds nothing.
  void produce(std::size_t count, std::uint8_t* const* payloads, std::uint8_t* coefficients);
  CodedSymbol produce();

  std::uint32_t emitted() const { return next_; }

 private:
  const Decoder& node_;
  SeedContext seeds_;
  std::uint32_t next_ = 0;
  std::vector<std::uint8_t> mix_;
};

}  // namespace ncast::rlnc
