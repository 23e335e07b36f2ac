// A peer's signed segment table (docs/protocol.md section 2.11) fed what a hostile relay can send, in
// any order: MANIFEST and SEGMENTS bodies as raw octets, the origin's genuine batches over any range,
// and those batches with a field or an octet changed. What must hold: what a decoder accepts encodes
// back to its very octets; a certificate verifies only as the origin's own; the peer's table is always
// a prefix of the origin's and final only when whole; a batch is taken only when it is exactly one the
// origin sealed, and such a batch is always taken when it joins what the peer holds.
#include <algorithm>
#include <vector>

#include "peer/stream_receiver.hpp"
#include "protocol/segment_seal.hpp"
#include "tests/fuzz/fuzz_target.hpp"

namespace {

using namespace ncast;
using namespace ncast::proto;
using Bytes = std::vector<std::uint8_t>;
using View = std::span<const std::uint8_t>;

constexpr std::uint32_t kSegments = 40;
constexpr std::uint16_t kN = 16;
constexpr std::uint32_t kSymbolSize = 32;
constexpr std::size_t kMaxSegment = std::size_t{kN} * kSymbolSize;

template <typename Body>
Bytes written(const Body& body) {
  Bytes out(kMaxDatagram);
  Writer w(out);
  write_body(w, body);
  FUZZ_CHECK(w.ok());
  out.resize(w.size());
  return out;
}

bool same(View a, View b) { return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin()); }

// The origin, made once per process (its key is random: no input can hold one of its signatures).
struct Origin {
  Origin() {
    manifest.stream_id = 9;
    manifest.name = "live";
    manifest.n = kN;
    manifest.symbol_size = kSymbolSize;
    manifest.segment_count = kSegments;
    manifest.origin = key.public_key();
    manifest.certificate = certify(key, stream_identity(manifest));
    chain.push_back(chain_start(stream_identity(manifest)));
    for (std::uint32_t i = 0; i < kSegments; ++i) {
      SegmentDescriptor d;
      d.size = 1 + (i * 7919) % kMaxSegment;
      for (std::size_t k = 0; k < d.hash.size(); ++k) d.hash[k] = static_cast<std::uint8_t>(i * 31 + k);
      table.push_back(d);
      chain.push_back(chain_next(chain.back(), i, d));
    }
    // Every seal the origin could make, once: signing per input would be most of the target's time.
    for (std::uint32_t end = 0; end <= kSegments; ++end)
      seals.push_back(seal_table(key, end, end == kSegments, chain[end]));
  }
  SegmentsBody batch(std::uint32_t first, std::uint32_t end) const {
    SegmentsBody b;
    b.first = first;
    b.segment_count = kSegments;
    b.descriptors.assign(table.begin() + first, table.begin() + end);
    const bool final = end == kSegments;
    b.stream_flags = final ? stream_flags::final : 0;
    b.seal = seals[end];
    return b;
  }
  // Exactly a batch the origin sealed (Ed25519 signatures are deterministic).
  bool sealed(const SegmentsBody& b) const {
    const std::uint64_t end = std::uint64_t{b.first} + b.descriptors.size();
    if (end > kSegments || b.segment_count != kSegments) return false;
    const SegmentsBody genuine = batch(b.first, static_cast<std::uint32_t>(end));
    return b.descriptors == genuine.descriptors && b.stream_flags == genuine.stream_flags && b.seal == genuine.seal;
  }

  Ed25519Identity key = Ed25519Identity::generate();
  ManifestBody manifest;
  std::vector<SegmentDescriptor> table;
  std::vector<Sha256Digest> chain;
  std::vector<Signature> seals;  // of the table's first `end` descriptors, final at its end
};

const Origin& origin() {
  static const Origin o;
  return o;
}

void deliver(peer::StreamReceiver& r, const SegmentsBody& b) {
  const Origin& o = origin();
  const std::uint32_t known = r.known();
  const auto verdict = r.on_sealed_segments(b, o.key.public_key());
  const bool sealed = o.sealed(b);
  // A batch without descriptors or final flag claims nothing (a path probe): taken unsealed, it changes nothing.
  const bool claims_nothing = b.descriptors.empty() && (b.stream_flags & stream_flags::final) == 0;
  if (verdict == peer::StreamReceiver::Sealed::accepted) FUZZ_CHECK(sealed || (claims_nothing && r.known() == known));
  if (sealed && b.first <= known) FUZZ_CHECK(verdict == peer::StreamReceiver::Sealed::accepted);
  FUZZ_CHECK(r.known() <= kSegments);
  for (std::uint32_t i = 0; i < r.known(); ++i) FUZZ_CHECK(r.descriptor(i) == o.table[i]);
  FUZZ_CHECK(!r.final_seen() || r.known() == kSegments);
}

// One of the origin's batches with one thing changed (or, for some choices, nothing).
SegmentsBody altered(ncast::fuzz::Input& in) {
  const std::uint32_t first = in.u8() % (kSegments + 1);
  SegmentsBody b = origin().batch(first, first + in.u8() % (kSegments - first + 1));
  const std::uint8_t at = in.u8();
  switch (in.u8() % 5) {
    case 0:
      if (!b.descriptors.empty()) b.descriptors[at % b.descriptors.size()].hash[at % 32] ^= in.u8();
      break;
    case 1:
      if (!b.descriptors.empty()) b.descriptors[at % b.descriptors.size()].size = 1 + in.u16() % kMaxSegment;
      break;
    case 2: b.first = static_cast<std::uint32_t>(b.first + at % 3) - 1; break;
    case 3: b.stream_flags ^= stream_flags::final; break;
    case 4: b.seal[at % b.seal.size()] ^= in.u8(); break;
  }
  return b;
}

}  // namespace

NCAST_FUZZ_TARGET(signed_table) {
  ncast::fuzz::Input in(data, size);
  const Origin& o = origin();
  peer::StreamReceiver r({4, false}, [](View) {});
  FUZZ_CHECK(r.adopt(o.manifest).empty());
  // A few batches per input: each costs a signature check, and longer runs add nothing new.
  for (int op = 0; op < 16 && !in.empty(); ++op) {
    switch (in.u8() % 4) {
      case 0: {
        const View raw = in.bytes(in.u16() % 512);
        const auto m = decode_manifest_body(raw);
        if (!m) break;
        FUZZ_CHECK(same(written(*m), raw));
        // Only the origin's own certificate of its own stream verifies.
        if (certificate_verifies(*m))
          FUZZ_CHECK(m->origin == o.key.public_key() &&
                     certificate_message(stream_identity(*m)) == certificate_message(stream_identity(o.manifest)));
        break;
      }
      case 1: {
        const View raw = in.bytes(in.u16() % 1500);
        const auto b = decode_segments_body(raw, kMaxSegment);
        if (!b) break;
        FUZZ_CHECK(same(written(*b), raw));
        deliver(r, *b);
        break;
      }
      case 2: {
        const std::uint32_t first = in.u8() % (kSegments + 1);
        deliver(r, o.batch(first, first + in.u8() % (kSegments - first + 1)));
        break;
      }
      case 3: deliver(r, altered(in)); break;
    }
  }
  return 0;
}
