#pragma once
// A CODED packet's symbol as the codec takes it. The wire has four kinds (protocol/packets.hpp); the
// codec three: a source symbol, a coded one with its coefficients, a recoded one. Seeded symbols carry
// only their index: their coefficients are drawn here from the sending server's seed, since the
// receiver hears several servers and each seeds its own.
#include <cstddef>
#include <cstdint>
#include <span>

#include "coding/rlnc/symbol.hpp"
#include "protocol/packets.hpp"

namespace ncast::peer {

struct CodecSymbol {
  rlnc::SymbolView view;
  // Its coefficient row over the segment's n_s source symbols (the unit vector for a source symbol):
  // what a receiver keeps beside the payload as evidence.
  std::span<const std::uint8_t> coefficients;
};

// n_s: the segment's source symbols; scratch (n_s octets at least) holds the coefficients that the
// wire did not carry. Throws rlnc::Error for coefficients that cannot be drawn.
CodecSymbol codec_symbol(const proto::CodedView& symbol, std::uint32_t server_id, std::uint32_t stream_id,
                         std::size_t n_s, std::span<std::uint8_t> scratch);

}  // namespace ncast::peer
