#include "protocol/packets.hpp"

#include <algorithm>
#include <bit>

namespace ncast::proto {
namespace {

bool known_type(std::uint8_t t) {
  switch (static_cast<PacketType>(t)) {
    case PacketType::hello:
    case PacketType::retry:
    case PacketType::join:
    case PacketType::reject:
    case PacketType::manifest:
    case PacketType::segments:
    case PacketType::coded:
    case PacketType::ack:
    case PacketType::bye: return true;
  }
  return false;
}

void write_prefix(Writer& w, std::uint8_t version, PacketType type) {
  w.u16(kMagic);
  w.u8(version);
  w.u8(static_cast<std::uint8_t>(type));
}

// A clear packet's prefix, as parse_prefix read it from d: of this type and version.
std::optional<DropReason> check_prefix(const Prefix& prefix, PacketType type, std::span<const std::uint8_t> d) {
  if (d.size() < kPrefixSize) return DropReason::truncated;
  if (prefix.type != type) return DropReason::bad_type;
  if (prefix.version != kVersion) return DropReason::bad_version;
  return std::nullopt;
}

// decode(prefix, datagram) after parsing the prefix.
template <typename Decode>
auto with_prefix(std::span<const std::uint8_t> d, Decode decode) -> decltype(decode(Prefix{}, d)) {
  auto prefix = parse_prefix(d);
  if (!prefix) return prefix.error();
  return decode(*prefix, d);
}

std::vector<std::uint8_t> finish(std::vector<std::uint8_t> buf, const Writer& w) {
  if (!w.ok()) throw std::length_error("packet does not fit its buffer");
  buf.resize(w.size());
  return buf;
}

bool all_zero(std::span<const std::uint8_t> b) {
  return std::all_of(b.begin(), b.end(), [](std::uint8_t x) { return x == 0; });
}

}  // namespace

bool is_protected(PacketType type) { return static_cast<std::uint8_t>(type) >= 0x10; }

Parsed<Prefix> parse_prefix(std::span<const std::uint8_t> datagram) {
  Reader r(datagram);
  const std::uint16_t magic = r.u16();
  const std::uint8_t version = r.u8();
  const std::uint8_t type = r.u8();
  if (!r.ok()) return DropReason::truncated;
  if (magic != kMagic) return DropReason::bad_magic;
  if (!known_type(type)) return DropReason::bad_type;
  return Prefix{version, static_cast<PacketType>(type)};
}

// ---- HELLO ----

std::vector<std::uint8_t> encode(const Hello& hello, std::size_t pad_to) {
  if (hello.stream.empty() || hello.stream.size() > 255)
    throw std::invalid_argument("stream name must be 1..255 octets");
  std::vector<std::uint8_t> buf(kMaxClearSize);
  Writer w(buf);
  write_prefix(w, hello.version, PacketType::hello);
  w.bytes(hello.nonce);
  w.short_string(hello.stream);
  const std::size_t target = std::clamp(pad_to, kMinHelloSize, kMaxClearSize);
  if (w.size() < target) w.zeros(target - w.size());
  return finish(std::move(buf), w);
}

Parsed<Hello> decode_hello(std::span<const std::uint8_t> d) {
  return with_prefix(d, [](const Prefix& p, auto datagram) { return decode_hello(p, datagram); });
}

Parsed<Hello> decode_hello(const Prefix& prefix, std::span<const std::uint8_t> d) {
  if (d.size() < kMinHelloSize) return DropReason::truncated;
  if (d.size() > kMaxClearSize) return DropReason::oversized;
  if (auto e = check_prefix(prefix, PacketType::hello, d)) return *e;
  Reader r(d.subspan(kPrefixSize));
  Hello h;
  r.copy_to(h.nonce);
  h.stream = r.short_string(1);
  if (!r.ok() || !r.rest_is_zero()) return DropReason::malformed;
  return h;
}

// ---- RETRY ----

std::vector<std::uint8_t> encode(const Retry& retry) {
  if (retry.token.empty() || retry.token.size() > kMaxTokenSize)
    throw std::invalid_argument("token must be 1..64 octets");
  std::vector<std::uint8_t> buf(kPrefixSize + 16 + 1 + kMaxTokenSize);
  Writer w(buf);
  write_prefix(w, kVersion, PacketType::retry);
  w.bytes(retry.nonce);
  w.u8(static_cast<std::uint8_t>(retry.token.size()));
  w.bytes(retry.token);
  return finish(std::move(buf), w);
}

Parsed<Retry> decode_retry(std::span<const std::uint8_t> d) {
  return with_prefix(d, [](const Prefix& p, auto datagram) { return decode_retry(p, datagram); });
}

Parsed<Retry> decode_retry(const Prefix& prefix, std::span<const std::uint8_t> d) {
  if (auto e = check_prefix(prefix, PacketType::retry, d)) return *e;
  Reader r(d.subspan(kPrefixSize));
  Retry out;
  r.copy_to(out.nonce);
  const std::size_t len = r.u8();
  auto token = r.bytes(len);
  if (!r.ok()) return DropReason::truncated;
  if (len == 0 || len > kMaxTokenSize || !r.done()) return DropReason::malformed;
  out.token.assign(token.begin(), token.end());
  return out;
}

// ---- JOIN ----

std::vector<std::uint8_t> encode(const Join& join, std::size_t pad_to) {
  if (join.token.empty() || join.token.size() > kMaxTokenSize)
    throw std::invalid_argument("token must be 1..64 octets");
  if (join.suites.empty() || join.suites.size() > kMaxSuites) throw std::invalid_argument("1..8 cipher suites");
  std::vector<std::uint8_t> buf(kMaxClearSize);
  Writer w(buf);
  write_prefix(w, kVersion, PacketType::join);
  w.bytes(join.nonce);
  w.u8(static_cast<std::uint8_t>(join.token.size()));
  w.bytes(join.token);
  w.bytes(join.peer_public);
  w.short_string(join.stream);
  w.u32(join.start_segment);
  w.u16(join.window);
  w.u16(join.share);
  w.u8(join.flags);
  w.u16(join.max_datagram);
  w.u32(join.max_rate_kbps);
  w.u8(static_cast<std::uint8_t>(join.suites.size()));
  w.bytes(join.suites);
  const std::size_t target = std::clamp(pad_to, kMinHelloSize, kMaxClearSize);
  if (w.size() < target) w.zeros(target - w.size());
  return finish(std::move(buf), w);
}

Parsed<Join> decode_join(std::span<const std::uint8_t> d) {
  return with_prefix(d, [](const Prefix& p, auto datagram) { return decode_join(p, datagram); });
}

Parsed<Join> decode_join(const Prefix& prefix, std::span<const std::uint8_t> d) {
  if (d.size() > kMaxClearSize) return DropReason::oversized;
  if (auto e = check_prefix(prefix, PacketType::join, d)) return *e;
  Reader r(d.subspan(kPrefixSize));
  Join j;
  r.copy_to(j.nonce);
  const std::size_t token_len = r.u8();
  auto token = r.bytes(token_len);
  r.copy_to(j.peer_public);
  j.stream = r.short_string(1);
  j.start_segment = r.u32();
  j.window = r.u16();
  j.share = r.u16();
  j.flags = r.u8();
  j.max_datagram = r.u16();
  j.max_rate_kbps = r.u32();
  const std::size_t suites = r.u8();
  auto suite_bytes = r.bytes(suites);
  if (!r.ok()) return DropReason::truncated;
  if (token_len == 0 || token_len > kMaxTokenSize || j.window == 0 || j.window > kMaxWindow || j.share == 0 ||
      j.share > kFullShare || (j.flags & ~(join_flags::systematic | join_flags::download)) != 0 ||
      j.max_datagram < kMinDatagram || j.max_datagram > kMaxDatagram || suites == 0 || suites > kMaxSuites ||
      !r.rest_is_zero())
    return DropReason::malformed;
  j.token.assign(token.begin(), token.end());
  j.suites.assign(suite_bytes.begin(), suite_bytes.end());
  return j;
}

// ---- REJECT ----

std::vector<std::uint8_t> encode(const Reject& reject) {
  if (reject.versions.size() > kMaxVersions) throw std::invalid_argument("at most 16 versions");
  std::vector<std::uint8_t> buf(kPrefixSize + 16 + 1 + 4 + 1 + kMaxVersions);
  Writer w(buf);
  write_prefix(w, reject.version, PacketType::reject);
  w.bytes(reject.nonce);
  w.u8(static_cast<std::uint8_t>(reject.reason));
  w.u32(reject.retry_after_ms);
  w.u8(static_cast<std::uint8_t>(reject.versions.size()));
  w.bytes(reject.versions);
  return finish(std::move(buf), w);
}

Parsed<Reject> decode_reject(std::span<const std::uint8_t> d) {
  return with_prefix(d, [](const Prefix& p, auto datagram) { return decode_reject(p, datagram); });
}

Parsed<Reject> decode_reject(const Prefix& prefix, std::span<const std::uint8_t> d) {
  // The REJECT layout is the same in every version, so its version byte is not checked.
  if (d.size() < kPrefixSize) return DropReason::truncated;
  if (prefix.type != PacketType::reject) return DropReason::bad_type;
  Reader r(d.subspan(kPrefixSize));
  Reject out;
  out.version = prefix.version;
  r.copy_to(out.nonce);
  const std::uint8_t reason = r.u8();
  out.retry_after_ms = r.u32();
  const std::size_t count = r.u8();
  auto versions = r.bytes(count);
  if (!r.ok()) return DropReason::truncated;
  if (reason < 1 || reason > 5 || count > kMaxVersions || !r.done()) return DropReason::malformed;
  out.reason = static_cast<RejectReason>(reason);
  out.versions.assign(versions.begin(), versions.end());
  return out;
}

// ---- protected ----

Parsed<Header> parse_header(std::span<const std::uint8_t> d) {
  return with_prefix(d, [](const Prefix& p, auto datagram) { return parse_header(p, datagram); });
}

Parsed<Header> parse_header(const Prefix& prefix, std::span<const std::uint8_t> d) {
  if (!is_protected(prefix.type)) return DropReason::bad_type;
  if (prefix.version != kVersion) return DropReason::bad_version;
  if (d.size() < kHeaderSize + kTagSize) return DropReason::truncated;
  if (d.size() > kMaxDatagram) return DropReason::oversized;
  Reader r(d.subspan(kPrefixSize));
  Header h;
  h.type = prefix.type;
  h.session = r.u64();
  h.number = r.u64();
  return h;
}

void write_header(Writer& w, const Header& header) {
  write_prefix(w, kVersion, header.type);
  w.u64(header.session);
  w.u64(header.number);
}

std::optional<std::span<const std::uint8_t>> open_packet(std::span<std::uint8_t> d, const Header& header, Aead& aead) {
  if (d.size() < kHeaderSize + kTagSize) return std::nullopt;
  const std::size_t body = d.size() - kHeaderSize - kTagSize;
  if (!aead.open(header.number, d.data(), kHeaderSize, body)) return std::nullopt;
  return std::span<const std::uint8_t>(d.data() + kHeaderSize, body);
}

// ---- MANIFEST ----

void write_manifest_handshake(Writer& w, const ManifestHandshake& h) {
  w.bytes(h.nonce);
  w.bytes(h.server_nonce);
  w.bytes(h.server_public);
  w.bytes(h.identity);
  w.u8(h.suite);
  w.bytes(h.signature);
}

Parsed<ManifestHandshake> read_manifest_handshake(Reader& r) {
  ManifestHandshake h;
  r.copy_to(h.nonce);
  r.copy_to(h.server_nonce);
  r.copy_to(h.server_public);
  r.copy_to(h.identity);
  h.suite = r.u8();
  r.copy_to(h.signature);
  if (!r.ok()) return DropReason::truncated;
  if (!suite_from_wire(h.suite)) return DropReason::malformed;
  return h;
}

void write_body(Writer& w, const ManifestBody& b) {
  w.u32(b.server_id);
  w.u32(b.stream_id);
  w.short_string(b.name);
  w.u16(b.n);
  w.u32(b.symbol_size);
  w.u64(b.bitrate);
  w.u32(b.segment_count);
  w.u8(b.stream_flags);
  w.u32(b.start_segment);
  w.u16(b.window);
  w.u16(b.share);
  w.u8(b.session_flags);
  w.u32(b.rate);
  w.u16(b.max_datagram);
  w.u16(b.max_ack_delay_ms);
  w.u32(b.idle_timeout_ms);
  w.bytes(b.origin);
  w.bytes(b.certificate);
  const auto suite = suite_from_wire(b.stream_suite);
  if (!suite || b.stream_key.size() != key_size(*suite)) return w.fail();
  w.u8(b.stream_suite);
  w.bytes(b.stream_key);
}

Parsed<ManifestBody> decode_manifest_body(std::span<const std::uint8_t> body) {
  Reader r(body);
  ManifestBody b;
  b.server_id = r.u32();
  b.stream_id = r.u32();
  b.name = r.short_string(1);
  b.n = r.u16();
  b.symbol_size = r.u32();
  b.bitrate = r.u64();
  b.segment_count = r.u32();
  b.stream_flags = r.u8();
  b.start_segment = r.u32();
  b.window = r.u16();
  b.share = r.u16();
  b.session_flags = r.u8();
  b.rate = r.u32();
  b.max_datagram = r.u16();
  b.max_ack_delay_ms = r.u16();
  b.idle_timeout_ms = r.u32();
  r.copy_to(b.origin);
  r.copy_to(b.certificate);
  b.stream_suite = r.u8();
  const auto suite = suite_from_wire(b.stream_suite);
  const auto stream_key = r.bytes(suite ? key_size(*suite) : 0);
  if (!r.ok()) return DropReason::truncated;
  b.stream_key.assign(stream_key.begin(), stream_key.end());
  if (!suite || !r.done() || b.n == 0 || b.n > kMaxSymbols || b.symbol_size == 0 || b.symbol_size > kMaxSymbolSize ||
      (b.stream_flags & ~(stream_flags::final | stream_flags::live)) != 0 || b.window == 0 || b.window > kMaxWindow ||
      b.share == 0 || b.share > kFullShare ||
      (b.session_flags & ~(join_flags::systematic | join_flags::download)) != 0 || b.max_datagram < kMinDatagram ||
      b.max_datagram > kMaxDatagram || b.idle_timeout_ms == 0 || coded_packet_size(0, b.symbol_size) > b.max_datagram)
    return DropReason::malformed;
  return b;
}

// ---- SEGMENTS ----

void write_body(Writer& w, const SegmentsBody& b) {
  if (b.descriptors.size() > 255) return w.fail();
  w.u32(b.first);
  w.u32(b.segment_count);
  w.u8(b.stream_flags);
  w.u8(static_cast<std::uint8_t>(b.descriptors.size()));
  for (const auto& d : b.descriptors) {
    w.u32(d.size);
    w.bytes(d.hash);
  }
  w.bytes(b.seal);
}

Parsed<SegmentsBody> decode_segments_body(std::span<const std::uint8_t> body, std::size_t max_segment_bytes) {
  Reader r(body);
  SegmentsBody b;
  b.first = r.u32();
  b.segment_count = r.u32();
  b.stream_flags = r.u8();
  const std::size_t count = r.u8();
  if (!r.ok()) return DropReason::truncated;
  if (r.remaining() != count * kDescriptorSize + kSealSize) return DropReason::malformed;
  if ((b.stream_flags & ~(stream_flags::final | stream_flags::live)) != 0) return DropReason::malformed;
  if (std::uint64_t{b.first} + count > b.segment_count) return DropReason::malformed;
  // The final seal says the table ends here: only at the end of what the sender knows.
  if ((b.stream_flags & stream_flags::final) && b.first + count != b.segment_count) return DropReason::malformed;
  b.descriptors.resize(count);
  for (auto& d : b.descriptors) {
    d.size = r.u32();
    r.copy_to(d.hash);
    if (d.size == 0 || d.size > max_segment_bytes) return DropReason::malformed;
  }
  r.copy_to(b.seal);
  if (!r.done()) return DropReason::malformed;
  return b;
}

std::size_t descriptors_per_packet(std::size_t max_datagram) {
  const std::size_t room = max_datagram - kHeaderSize - kTagSize - kSegmentsHeaderSize - kSealSize;
  return std::min<std::size_t>(255, room / kDescriptorSize);
}

// ---- CODED ----

void write_coded_header(Writer& w, const CodedHeader& h) {
  w.u32(h.segment);
  w.u8(static_cast<std::uint8_t>(h.kind));
  w.u8(0);
  w.u16(h.density);
  w.u32(h.index);
}

std::optional<std::uint32_t> peek_coded_segment(std::span<const std::uint8_t> body) {
  if (body.size() < kCodedHeaderSize) return std::nullopt;
  Reader r(body);
  return r.u32();
}

Parsed<CodedView> decode_coded_body(std::span<const std::uint8_t> body, std::size_t n_s, std::size_t symbol_size) {
  Reader r(body);
  CodedView v;
  v.header.segment = r.u32();
  const std::uint8_t kind = r.u8();
  const std::uint8_t reserved = r.u8();
  v.header.density = r.u16();
  v.header.index = r.u32();
  if (!r.ok()) return DropReason::truncated;
  if (kind > 3 || reserved != 0) return DropReason::malformed;
  v.header.kind = static_cast<WireKind>(kind);
  const bool explicit_coefs = v.header.kind == WireKind::explicit_coded || v.header.kind == WireKind::recoded;
  if (r.remaining() != (explicit_coefs ? n_s : 0) + symbol_size) return DropReason::malformed;
  switch (v.header.kind) {
    case WireKind::systematic:
      if (v.header.index >= n_s || v.header.density != kDenseWire) return DropReason::malformed;
      break;
    case WireKind::seeded: break;
    case WireKind::explicit_coded:
    case WireKind::recoded:
      if (v.header.density != kDenseWire) return DropReason::malformed;
      v.coefficients = r.bytes(n_s);
      if (all_zero(v.coefficients)) return DropReason::malformed;
      break;
  }
  v.payload = r.bytes(symbol_size);
  if (!r.done()) return DropReason::malformed;
  return v;
}

// ---- ACK ----

void write_body(Writer& w, const AckBody& b) {
  if (b.entries.size() > kMaxAckEntries || b.history.size() > kMaxAckHistoryWords) return w.fail();
  w.u64(b.largest);
  w.u32(b.ack_delay_us);
  w.u32(b.received);
  w.u32(b.known);
  w.u32(b.next_needed);
  w.u8(b.flags);
  w.u8(static_cast<std::uint8_t>(b.entries.size()));
  for (const auto& e : b.entries) {
    w.u32(e.segment);
    w.u16(e.rank);
    w.u8(e.decoded ? 1 : 0);
    w.u8(0);
  }
  if (b.history.empty()) return;
  w.u8(static_cast<std::uint8_t>(b.history.size()));
  for (const std::uint64_t word : b.history) w.u64(word);
}

bool acknowledges(const AckBody& ack, std::uint64_t number) {
  if (number >= ack.largest) return number == ack.largest;
  if (ack.history.empty()) return true;
  const std::uint64_t back = ack.largest - 1 - number;
  return back < 64 * ack.history.size() && (ack.history[back / 64] >> (back % 64) & 1) != 0;
}

std::uint64_t acknowledged_of_last(const AckBody& ack, std::uint64_t span) {
  if (span == 0) return 0;
  std::uint64_t count = 1;  // the largest
  std::uint64_t below = std::min<std::uint64_t>(span - 1, 64 * ack.history.size());
  for (std::size_t w = 0; below > 0; ++w) {
    const std::uint64_t bits = below >= 64 ? ack.history[w] : ack.history[w] & ((std::uint64_t{1} << below) - 1);
    count += static_cast<std::uint64_t>(std::popcount(bits));
    below -= std::min<std::uint64_t>(below, 64);
  }
  return count;
}

Parsed<AckBody> decode_ack_body(std::span<const std::uint8_t> body) {
  Reader r(body);
  AckBody b;
  b.largest = r.u64();
  b.ack_delay_us = r.u32();
  b.received = r.u32();
  b.known = r.u32();
  b.next_needed = r.u32();
  b.flags = r.u8();
  const std::size_t count = r.u8();
  if (!r.ok()) return DropReason::truncated;
  if (count > kMaxAckEntries || (b.flags & ~(ack_flags::complete | ack_flags::final_seen)) != 0 ||
      r.remaining() < count * 8)
    return DropReason::malformed;
  b.entries.resize(count);
  std::uint64_t previous = 0;
  bool first = true;
  for (auto& e : b.entries) {
    e.segment = r.u32();
    e.rank = r.u16();
    const std::uint8_t state = r.u8();
    const std::uint8_t reserved = r.u8();
    if (state > 1 || reserved != 0 || e.rank > kMaxSymbols || e.segment < b.next_needed ||
        (!first && e.segment <= previous))
      return DropReason::malformed;
    e.decoded = state == 1;
    previous = e.segment;
    first = false;
  }
  if (r.done()) return b;
  // The optional history: a word count (an empty history is written as no block at all) and the words.
  const std::size_t words = r.u8();
  if (words == 0 || words > kMaxAckHistoryWords || r.remaining() != words * 8) return DropReason::malformed;
  b.history.resize(words);
  for (auto& word : b.history) word = r.u64();
  if (!r.done()) return DropReason::malformed;
  return b;
}

// ---- BYE ----

void write_body(Writer& w, const ByeBody& b) {
  w.u8(static_cast<std::uint8_t>(b.reason));
  if (b.reason != ByeReason::path_too_slow) return;
  w.u32(b.measured_kbps);
  w.u32(b.needed_kbps);
}

Parsed<ByeBody> decode_bye_body(std::span<const std::uint8_t> body) {
  Reader r(body);
  ByeBody bye;
  const std::uint8_t reason = r.u8();
  if (!r.ok()) return DropReason::truncated;
  if (reason > static_cast<std::uint8_t>(ByeReason::path_too_slow)) return DropReason::malformed;
  bye.reason = static_cast<ByeReason>(reason);
  if (bye.reason == ByeReason::path_too_slow) {
    bye.measured_kbps = r.u32();
    bye.needed_kbps = r.u32();
    if (!r.ok()) return DropReason::truncated;
  }
  if (!r.done()) return DropReason::malformed;
  return bye;
}

}  // namespace ncast::proto
