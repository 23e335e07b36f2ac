#pragma once
// What a sending session needs from a stream: its parameters, its segment table, and symbols of its
// segments written straight into a CODED body. The server's media streams implement it by encoding
// (systematic and seeded symbols); a relaying peer implements it by recoding what it has received.
#include <cstddef>
#include <cstdint>
#include <string>

#include "protocol/packets.hpp"
#include "protocol/wire.hpp"

namespace ncast::server {

class TableSeals;

struct StreamInfo {
  std::string name;
  std::uint32_t stream_id = 0;
  std::uint32_t server_id = 0;
  std::uint16_t n = 0;            // symbols per full segment
  std::uint32_t symbol_size = 0;  // L
  std::uint64_t bitrate = 0;      // bit/s, 0 when unknown
  bool live = false;
};

class SymbolSource {
 public:
  virtual ~SymbolSource() = default;

  virtual const StreamInfo& info() const = 0;
  virtual std::uint32_t segment_count() const = 0;
  // The oldest segment still served: a live stream's retention window drops the ones below it.
  virtual std::uint32_t first_segment() const { return 0; }
  // No segment will be added any more.
  virtual bool final() const = 0;
  // Where a peer joining a live stream at its edge starts: the newest segment a decoder can start at.
  virtual std::uint32_t live_edge() const = 0;
  virtual const proto::SegmentDescriptor& descriptor(std::uint32_t segment) const = 0;
  // Independent symbols of segment this source can supply: all n_s for an encoder, the rank received
  // so far for a relay.
  virtual std::size_t rank(std::uint32_t segment) const = 0;
  // Whether this source sends source symbols themselves first (an encoder can, a relay cannot).
  virtual bool can_send_systematic() const = 0;

  // Writes the CODED body (coded header, coefficients, payload) of source symbol i of segment.
  virtual bool write_systematic(std::uint32_t segment, std::uint32_t i, proto::Writer& w) = 0;
  // Writes the CODED body of the j-th coded symbol of segment for this session: the same j gives every
  // session the same seeded symbol (an encoder), or a fresh recoded one every time (a relay). False
  // when none can be made.
  virtual bool write_coded(std::uint32_t segment, std::uint32_t j, proto::Writer& w) = 0;
  // Whether write_coded gives the same symbol for the same (segment, j) (an encoder's), so that one
  // sealed copy serves every session (SharedSymbols); false for fresh ones every time (a relay's).
  virtual bool coded_symbols_repeat() const { return true; }

  // The origin's signatures of a stream this source forwards (a relay's); null when the server serving
  // it is its origin and signs itself.
  virtual TableSeals* forwarded_seals() { return nullptr; }

  // n_s and the segment's octets n_s·L of padded source.
  std::size_t symbols_of(std::uint32_t segment) const {
    const std::size_t L = info().symbol_size;
    return (descriptor(segment).size + L - 1) / L;
  }
};

}  // namespace ncast::server
