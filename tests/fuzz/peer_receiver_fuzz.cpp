// The peer's receiver (peer/stream_receiver) fed CODED bodies from up to four sources of one stream,
// read as the server link reads them (StreamReceiver::read_coded): systematic, seeded, explicit and
// recoded symbols of any segment, honest or lying (a changed octet, a garbage payload, a wrong
// vector), in any order, with queries of what an ACK would say. What must hold: every octet written is
// the stream's, in order, each segment once; a source that never lied is never convicted.
#include <algorithm>
#include <array>
#include <vector>

#include "coding/rlnc/coefficients.hpp"
#include "peer/stream_receiver.hpp"
#include "protocol/crypto.hpp"
#include "tests/fuzz/fuzz_target.hpp"
#include "tests/fuzz/gf_table.hpp"

namespace {

using namespace ncast;
using Bytes = std::vector<std::uint8_t>;

// The honest payload of coefficients over block (n symbols of len octets).
Bytes combination(const std::uint8_t* coefs, const Bytes& block, std::size_t n, std::size_t len) {
  Bytes out(len, 0);
  for (std::size_t j = 0; j < n; ++j) ncast::fuzz::axpy(out.data(), block.data() + j * len, coefs[j], len);
  return out;
}

}  // namespace

NCAST_FUZZ_TARGET(peer_receiver) {
  ncast::fuzz::Input in(data, size);
  const std::size_t n = 1 + in.u8() % 12, len = 1 + in.u8() % 24, seg_bytes = n * len;
  const std::size_t media_size = 1 + in.u16() % (3 * seg_bytes);
  const std::uint16_t window = static_cast<std::uint16_t>(1 + in.u8() % 4);
  const bool relay = in.flag();
  Bytes media(media_size);
  std::uint64_t x = in.u8() + 1u;
  for (auto& b : media) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    b = static_cast<std::uint8_t>(x >> 8);
  }
  const std::size_t segments = (media_size + seg_bytes - 1) / seg_bytes;

  const proto::ManifestBody manifest{.stream_id = 7,
                                     .name = "s",
                                     .n = static_cast<std::uint16_t>(n),
                                     .symbol_size = static_cast<std::uint32_t>(len),
                                     .segment_count = static_cast<std::uint32_t>(segments),
                                     .stream_key = {}};
  proto::SegmentsBody table;
  table.segment_count = manifest.segment_count;
  table.stream_flags = proto::stream_flags::final;
  std::vector<Bytes> blocks;  // each segment zero-padded to n_s·L
  for (std::size_t s = 0; s < segments; ++s) {
    const std::size_t off = s * seg_bytes, size_s = std::min(seg_bytes, media_size - off);
    table.descriptors.push_back({static_cast<std::uint32_t>(size_s), proto::sha256({media.data() + off, size_s})});
    Bytes block((size_s + len - 1) / len * len, 0);
    std::copy_n(media.begin() + static_cast<long>(off), size_s, block.begin());
    blocks.push_back(std::move(block));
  }

  std::size_t written = 0;
  peer::StreamReceiver r({window, relay, std::chrono::milliseconds(500)}, [&](std::span<const std::uint8_t> d) {
    FUZZ_CHECK(written + d.size() <= media.size());
    FUZZ_CHECK(std::equal(d.begin(), d.end(), media.begin() + static_cast<long>(written)));
    written += d.size();
    FUZZ_CHECK(written % seg_bytes == 0 || written == media.size());  // whole segments only
  });
  FUZZ_CHECK(r.adopt(manifest).empty());
  FUZZ_CHECK(r.on_segments(table));

  std::array<bool, 4> lied{};
  const auto now = peer::Clock::now();
  for (int steps = 0; !in.empty() && steps < 512; ++steps) {
    const std::uint8_t op = in.u8();
    const std::uint32_t source = 1 + op % 4;  // server ids 1..4
    const std::uint32_t seg = in.u8() % static_cast<std::uint32_t>(segments);
    const std::size_t n_s = blocks[seg].size() / len;
    const int kind = op / 4 % 4;
    // Explicit kinds are numbered as a relay numbers them (protocol version 2): a counter.
    const std::uint32_t index = kind == 0 ? in.u8() % n_s : kind == 1 ? in.u32() : static_cast<std::uint32_t>(steps);
    const std::uint16_t density =
        kind == 1 && in.flag() ? static_cast<std::uint16_t>(in.u16() | 0x100) : proto::kDenseWire;
    Bytes coefs(n_s, 0);
    if (kind == 0) {
      coefs[index] = 1;
    } else if (kind == 1) {
      rlnc::draw_coefficients({rlnc::coefficient_seed(source, manifest.stream_id), seg}, index,
                              rlnc::Density::from_threshold(std::uint32_t{density} + 1), coefs);
    } else {
      const auto given = in.bytes(n_s);
      std::copy(given.begin(), given.end(), coefs.begin());
      if (std::all_of(coefs.begin(), coefs.end(), [](std::uint8_t c) { return c == 0; })) coefs[0] = 1;
    }
    Bytes payload = combination(coefs.data(), blocks[seg], n_s, len);
    switch (op / 16 % 8) {  // mostly honest
      case 0:
        payload[in.u8() % len] ^= static_cast<std::uint8_t>(1 + in.u8() % 255);
        lied[source - 1] = true;
        break;
      case 1: {
        const auto garbage = in.bytes(len);
        if (!std::equal(garbage.begin(), garbage.end(), payload.begin())) lied[source - 1] = true;
        std::copy(garbage.begin(), garbage.end(), payload.begin());
        break;
      }
    }
    // Through the wire format, as a session hands it over.
    Bytes body(proto::kCodedHeaderSize + n_s + len);
    proto::Writer w(body);
    proto::write_coded_header(w, {seg, static_cast<proto::WireKind>(kind), density, index});
    if (kind >= 2) w.bytes(coefs);
    w.bytes(payload);
    body.resize(w.size());
    const auto view = r.read_coded(body);
    FUZZ_CHECK(view);
    r.on_symbol(*view, source, now);

    for (const auto& [id, p] : r.polluters()) FUZZ_CHECK(id >= 1 && id <= 4 && lied[id - 1]);
    for (const auto& e : r.ack_entries()) FUZZ_CHECK(e.segment >= r.next_needed() && e.rank <= n);
  }
  FUZZ_CHECK(written == std::min<std::size_t>(media.size(), std::size_t{r.next_needed()} * seg_bytes));
  return 0;
}
