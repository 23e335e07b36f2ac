// Every packet decoder of protocol/ on one datagram, as a server or peer receives it: the
// prefix, each clear packet, the protected header, its AEAD opening (for CODED: its authenticator and
// the stream key's shared part), the replay window, and every
// protected body as a session endpoint (a relay, a peer) could send it once decrypted. What a decoder
// accepts must encode back to exactly the octets it came from, and views must lie inside the input.
#include <algorithm>
#include <optional>
#include <vector>

#include "net/address.hpp"
#include "protocol/coded_seal.hpp"
#include "protocol/handshake.hpp"
#include "protocol/packets.hpp"
#include "protocol/replay_window.hpp"
#include "protocol/token.hpp"
#include "tests/fuzz/fuzz_target.hpp"

namespace {

using namespace ncast::proto;
using Bytes = std::vector<std::uint8_t>;
using View = std::span<const std::uint8_t>;

bool same(View a, View b) { return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin()); }
bool inside(View part, View whole) {
  return part.empty() || (part.data() >= whole.data() && part.data() + part.size() <= whole.data() + whole.size());
}

template <typename Body>
Bytes written(const Body& body) {
  Bytes out(kMaxDatagram);
  Writer w(out);
  write_body(w, body);
  FUZZ_CHECK(w.ok());
  out.resize(w.size());
  return out;
}

// Fixed keys: a datagram's tag never verifies by chance, but every length on the way is checked.
struct Keys {
  std::array<std::uint8_t, 16> key{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  std::array<std::uint8_t, kIvSize> iv{};
  Aead aead{Suite::aes128_gcm, key, iv, Aead::Direction::open};
  Cmac coded_mac{key};
  Aead stream{Suite::aes128_gcm, key, iv, Aead::Direction::open};
  TokenMinter minter{std::array<std::uint8_t, 32>{7}, 30};
  ncast::net::Address address = ncast::net::Address::parse("192.0.2.1:4433");
  PeerHandshake handshake = make_handshake();

  static PeerHandshake make_handshake() {
    Join wanted;
    wanted.stream = "movie";
    PeerHandshake h(wanted);
    h.on_retry({h.nonce(), Bytes(20, 1)});
    return h;
  }
};

void clear_packets(View d, Keys& keys) {
  if (auto h = decode_hello(d)) {
    FUZZ_CHECK(same(encode(*h, d.size()), d));
  }
  if (auto r = decode_retry(d)) {
    FUZZ_CHECK(same(encode(*r), d));
  }
  if (auto j = decode_join(d)) {
    const Bytes e = encode(*j);  // padded to the minimum only; the rest of d is zero padding
    FUZZ_CHECK(e.size() <= d.size() && same(e, d.first(e.size())));
    keys.minter.verify(j->token, keys.address, j->nonce, 100);
    choose_suite(j->suites);
  }
  if (auto r = decode_reject(d)) {
    FUZZ_CHECK(same(encode(*r), d));
  }
}

void protected_packet(View d, Keys& keys) {
  auto h = parse_header(d);
  if (!h) return;
  {
    Bytes header(kHeaderSize);
    Writer w(header);
    write_header(w, *h);
    FUZZ_CHECK(w.ok() && same(header, d.first(kHeaderSize)));
  }
  ReplayWindow window;
  if (window.check(h->number)) window.accept(h->number);
  FUZZ_CHECK(!window.check(h->number));

  Bytes copy(d.begin(), d.end());
  if (h->type == PacketType::manifest) {
    Reader r(d.subspan(kHeaderSize));
    if (auto m = read_manifest_handshake(r)) {
      Bytes back(kManifestAadSize - kHeaderSize);
      Writer w(back);
      write_manifest_handshake(w, *m);
      FUZZ_CHECK(w.ok() && same(back, d.subspan(kHeaderSize, back.size())));
    }
    FUZZ_CHECK(!keys.handshake.on_manifest(copy, std::nullopt));  // nothing but the server's signature passes
  } else if (h->type == PacketType::coded) {
    // A CODED packet: the session's authenticator, then the stream key's shared part (which lies inside).
    FUZZ_CHECK(!coded_authentic(d, keys.coded_mac));
    if (auto shared = coded_shared_part(copy)) {
      FUZZ_CHECK(shared->size() == d.size() - kHeaderSize - kAuthenticatorSize);
      FUZZ_CHECK(!open_shared(keys.stream, *shared));
    }
  } else {
    FUZZ_CHECK(!open_packet(copy, *h, keys.aead));
  }
}

// The body of a protected packet, as its decoders see it after decryption. The segment parameters a
// receiver would know from its manifest come from the session field (1..256 symbols of 1..256 octets).
void bodies(View d) {
  if (d.size() < kHeaderSize) return;
  const std::uint64_t session = (Reader(d.subspan(kPrefixSize))).u64();
  const std::size_t n_s = 1 + (session & 0xFF), symbol_size = 1 + (session >> 8 & 0xFF);
  const View body = d.subspan(kHeaderSize);

  if (auto m = decode_manifest_body(body)) FUZZ_CHECK(same(written(*m), body));
  if (auto s = decode_segments_body(body, n_s * symbol_size)) {
    FUZZ_CHECK(same(written(*s), body));
    FUZZ_CHECK(s->descriptors.size() <= descriptors_per_packet(kMaxDatagram));
  }
  if (auto a = decode_ack_body(body)) FUZZ_CHECK(same(written(*a), body));
  if (auto b = decode_bye_body(body)) FUZZ_CHECK(same(written(*b), body));

  const auto peeked = peek_coded_segment(body);
  if (auto c = decode_coded_body(body, n_s, symbol_size)) {
    FUZZ_CHECK(peeked && *peeked == c->header.segment);
    FUZZ_CHECK(c->payload.size() == symbol_size && inside(c->payload, body));
    FUZZ_CHECK(inside(c->coefficients, body));
    const bool explicit_kind = c->header.kind == WireKind::explicit_coded || c->header.kind == WireKind::recoded;
    FUZZ_CHECK(c->coefficients.size() == (explicit_kind ? n_s : 0));
    FUZZ_CHECK(c->header.kind != WireKind::systematic || c->header.index < n_s);
    Bytes back(body.size());
    Writer w(back);
    write_coded_header(w, c->header);
    w.bytes(c->coefficients);
    w.bytes(c->payload);
    FUZZ_CHECK(w.ok() && same(back, body));
  }
}

}  // namespace

NCAST_FUZZ_TARGET(packets) {
  static Keys keys;
  const View d(data, size);
  if (auto p = parse_prefix(d)) {
    FUZZ_CHECK(d.size() >= kPrefixSize);
  } else {
    FUZZ_CHECK(!to_string(p.error()).empty());
  }
  clear_packets(d, keys);
  protected_packet(d, keys);
  bodies(d);
  return 0;
}
