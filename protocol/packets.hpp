#pragma once
// Encoding and decoding of every packet of docs/protocol.md. Decoders take untrusted datagrams: they
// check every length and range, accept nothing left over (except the padding HELLO and JOIN allow) and
// say why they refuse (a DropReason), never touching memory outside the datagram.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "protocol/crypto.hpp"
#include "protocol/drop_reason.hpp"
#include "protocol/token.hpp"
#include "protocol/wire.hpp"

namespace ncast::proto {

inline constexpr std::uint16_t kMagic = 0x4E43;  // "NC"
inline constexpr std::uint8_t kVersion = 2;
inline constexpr std::size_t kPrefixSize = 4;
inline constexpr std::size_t kHeaderSize = 20;  // prefix, session, packet number
inline constexpr std::size_t kMinHelloSize = 64;
inline constexpr std::size_t kMaxClearSize = 1200;  // HELLO, JOIN
// 1280 (the IPv6 minimum MTU) − 40 (IPv6 header) − 8 (UDP header): a version 2 recoded symbol of the
// defaults (n = 128, L = 1024) is 1208 octets, past the 1200 that carried version 1's.
inline constexpr std::size_t kMinDatagram = 1232;
inline constexpr std::size_t kMaxDatagram = 65507;
inline constexpr std::size_t kMaxWindow = 64;
inline constexpr std::size_t kMaxAckEntries = 64;
inline constexpr std::size_t kMaxAckHistoryWords = 16;  // 1024 packet numbers: a replay window's worth
inline constexpr std::uint16_t kFullShare = 1000;
inline constexpr std::size_t kMaxTokenSize = 64;
inline constexpr std::size_t kMaxSuites = 8;
inline constexpr std::size_t kMaxVersions = 16;
inline constexpr std::size_t kManifestSignedSize = 117;  // octets 0..116 of a MANIFEST
inline constexpr std::size_t kManifestAadSize = 181;     // octets 0..180: the signed part and the signature
inline constexpr std::size_t kCodedHeaderSize = 12;
inline constexpr std::size_t kAuthenticatorSize = 8;  // a CODED packet's per-session authenticator
inline constexpr std::size_t kDescriptorSize = 36;
inline constexpr std::size_t kSegmentsHeaderSize = 10;
inline constexpr std::size_t kSealSize = 64;  // the origin's signature closing a SEGMENTS body
inline constexpr std::uint32_t kLiveEdge = 0xFFFFFFFF;
inline constexpr std::uint16_t kDenseWire = 0xFFFF;
inline constexpr std::size_t kMaxSymbols = 256;
inline constexpr std::size_t kMaxSymbolSize = 65536;

enum class PacketType : std::uint8_t {
  hello = 0x01,
  retry = 0x02,
  join = 0x03,
  reject = 0x04,
  manifest = 0x10,
  segments = 0x11,
  coded = 0x12,
  ack = 0x13,
  bye = 0x14,
};
bool is_protected(PacketType type);

// A decoder's answer: the value, or why the datagram must be dropped.
template <typename T>
class Parsed {
 public:
  Parsed(T value) : value_(std::move(value)) {}
  Parsed(DropReason reason) : reason_(reason) {}
  explicit operator bool() const { return value_.has_value(); }
  T& operator*() { return *value_; }
  const T& operator*() const { return *value_; }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  DropReason error() const { return reason_; }

 private:
  std::optional<T> value_;
  DropReason reason_ = DropReason::malformed;
};

struct Prefix {
  std::uint8_t version;
  PacketType type;
};
// Checks length, magic and type; the version is returned as found (HELLO of another version gets a
// REJECT, everything else of another version is dropped by the caller).
Parsed<Prefix> parse_prefix(std::span<const std::uint8_t> datagram);
// Each decoder below also takes the prefix its caller already parsed from the same datagram, so that
// a dispatcher reads every prefix once; the forms without it parse the prefix themselves.

// ---- clear packets -------------------------------------------------------------------------------

struct Hello {
  std::uint8_t version = kVersion;
  Nonce nonce{};
  std::string stream;
};
// Padded with zeros to at least kMinHelloSize octets (pad_to may ask for more, up to kMaxClearSize).
std::vector<std::uint8_t> encode(const Hello& hello, std::size_t pad_to = kMinHelloSize);
Parsed<Hello> decode_hello(std::span<const std::uint8_t> datagram);
Parsed<Hello> decode_hello(const Prefix& prefix, std::span<const std::uint8_t> datagram);

struct Retry {
  Nonce nonce{};
  std::vector<std::uint8_t> token;  // 1..64
};
std::vector<std::uint8_t> encode(const Retry& retry);
Parsed<Retry> decode_retry(std::span<const std::uint8_t> datagram);
Parsed<Retry> decode_retry(const Prefix& prefix, std::span<const std::uint8_t> datagram);

namespace join_flags {
inline constexpr std::uint8_t systematic = 1;
inline constexpr std::uint8_t download = 2;
}  // namespace join_flags

// AES-128-GCM first (AES-NI makes it the cheaper one), then ChaCha20-Poly1305.
inline constexpr std::array<std::uint8_t, 2> kDefaultSuites{1, 2};

struct Join {
  Nonce nonce{};
  std::vector<std::uint8_t> token;
  PublicKey peer_public{};
  std::string stream;
  std::uint32_t start_segment = 0;
  std::uint16_t window = 8;
  std::uint16_t share = kFullShare;
  std::uint8_t flags = join_flags::systematic;
  std::uint16_t max_datagram = kMinDatagram;
  std::uint32_t max_rate_kbps = 0;
  std::vector<std::uint8_t> suites{kDefaultSuites.begin(), kDefaultSuites.end()};
};
// Padded with zeros to at least kMinHelloSize octets (pad_to may ask for more, up to kMaxClearSize).
std::vector<std::uint8_t> encode(const Join& join, std::size_t pad_to = kMinHelloSize);
Parsed<Join> decode_join(std::span<const std::uint8_t> datagram);
Parsed<Join> decode_join(const Prefix& prefix, std::span<const std::uint8_t> datagram);

enum class RejectReason : std::uint8_t {
  unsupported_version = 1,
  unknown_stream = 2,
  busy = 3,
  bad_request = 4,
  no_suite = 5
};

struct Reject {
  std::uint8_t version = kVersion;  // in the prefix: the highest version the server speaks
  Nonce nonce{};
  RejectReason reason = RejectReason::bad_request;
  std::uint32_t retry_after_ms = 0;
  std::vector<std::uint8_t> versions;
};
std::vector<std::uint8_t> encode(const Reject& reject);
Parsed<Reject> decode_reject(std::span<const std::uint8_t> datagram);
Parsed<Reject> decode_reject(const Prefix& prefix, std::span<const std::uint8_t> datagram);

// ---- protected packets ---------------------------------------------------------------------------

struct Header {
  PacketType type = PacketType::coded;
  std::uint64_t session = 0;
  std::uint64_t number = 0;
};
// The header of a protected packet of this version; checks the datagram can hold a header and a tag.
Parsed<Header> parse_header(std::span<const std::uint8_t> datagram);
Parsed<Header> parse_header(const Prefix& prefix, std::span<const std::uint8_t> datagram);
void write_header(Writer& w, const Header& header);

// Writes header, then body through write_body(Writer&), then seals; returns the packet length, or 0
// when it does not fit out.
template <typename WriteBody>
std::size_t seal_packet(std::span<std::uint8_t> out, const Header& header, Aead& aead, WriteBody&& write_body) {
  Writer w(out);
  write_header(w, header);
  write_body(w);
  const std::size_t body = w.size() - kHeaderSize;
  w.reserve(kTagSize);
  if (!w.ok()) return 0;
  aead.seal(header.number, out.data(), kHeaderSize, body);
  return w.size();
}
// Decrypts a protected packet (not MANIFEST) in place; its body, or nullopt when the tag fails.
std::optional<std::span<const std::uint8_t>> open_packet(std::span<std::uint8_t> datagram, const Header& header,
                                                         Aead& aead);

namespace stream_flags {
inline constexpr std::uint8_t final = 1;
inline constexpr std::uint8_t live = 2;
}  // namespace stream_flags

struct ManifestHandshake {
  Nonce nonce{};
  Nonce server_nonce{};
  PublicKey server_public{};
  PublicKey identity{};
  std::uint8_t suite = 1;
  Signature signature{};
};
// The clear part of a MANIFEST (octets 20..180).
void write_manifest_handshake(Writer& w, const ManifestHandshake& h);
Parsed<ManifestHandshake> read_manifest_handshake(Reader& r);

struct ManifestBody {
  std::uint32_t server_id = 0;
  std::uint32_t stream_id = 0;
  std::string name;
  std::uint16_t n = 0;
  std::uint32_t symbol_size = 0;
  std::uint64_t bitrate = 0;
  std::uint32_t segment_count = 0;
  std::uint8_t stream_flags = 0;
  std::uint32_t start_segment = 0;
  std::uint16_t window = 1;
  std::uint16_t share = kFullShare;
  std::uint8_t session_flags = 0;
  std::uint32_t rate = 0;
  std::uint16_t max_datagram = kMinDatagram;
  std::uint16_t max_ack_delay_ms = 5;
  std::uint32_t idle_timeout_ms = 10000;
  // The stream certificate (segment_seal.hpp): the origin's key, and its signature of the stream's identity.
  PublicKey origin{};
  Signature certificate{};
  // The key CODED packets' shared parts are sealed with (protocol/coded_seal.hpp), and its suite.
  std::uint8_t stream_suite = 1;
  std::vector<std::uint8_t> stream_key;
};
void write_body(Writer& w, const ManifestBody& body);
Parsed<ManifestBody> decode_manifest_body(std::span<const std::uint8_t> body);

struct SegmentDescriptor {
  std::uint32_t size = 0;
  Sha256Digest hash{};
  bool operator==(const SegmentDescriptor&) const = default;
};

struct SegmentsBody {
  std::uint32_t first = 0;
  std::uint32_t segment_count = 0;
  std::uint8_t stream_flags = 0;
  std::vector<SegmentDescriptor> descriptors;  // at most 255
  // The origin's seal of the table up to first + count (segment_seal.hpp), final when the final flag is set.
  Signature seal{};
};
void write_body(Writer& w, const SegmentsBody& body);
// Checks sizes against 1..n·L, and that a batch with the final flag ends at segment_count.
Parsed<SegmentsBody> decode_segments_body(std::span<const std::uint8_t> body, std::size_t max_segment_bytes);
// How many descriptors fit one SEGMENTS packet of max_datagram octets.
std::size_t descriptors_per_packet(std::size_t max_datagram);

enum class WireKind : std::uint8_t { systematic = 0, seeded = 1, explicit_coded = 2, recoded = 3 };

struct CodedHeader {
  std::uint32_t segment = 0;
  WireKind kind = WireKind::seeded;
  std::uint16_t density = kDenseWire;  // threshold − 1 for seeded symbols
  std::uint32_t index = 0;             // with segment and kind, unique per stream key (the AEAD nonce)
};
void write_coded_header(Writer& w, const CodedHeader& header);
// The segment a CODED body is for, so the caller can look up its n_s; nullopt if the body is too short.
std::optional<std::uint32_t> peek_coded_segment(std::span<const std::uint8_t> body);

struct CodedView {
  CodedHeader header;
  std::span<const std::uint8_t> coefficients;  // n_s octets for explicit kinds, else empty
  std::span<const std::uint8_t> payload;       // L octets
};
// Parses a CODED body of a segment with n_s source symbols of symbol_size octets.
Parsed<CodedView> decode_coded_body(std::span<const std::uint8_t> body, std::size_t n_s, std::size_t symbol_size);
// Octets of a CODED packet: header, coded header, coefficients, payload, stream tag, authenticator.
constexpr std::size_t coded_packet_size(std::size_t coefficients, std::size_t symbol_size) {
  return kHeaderSize + kCodedHeaderSize + coefficients + symbol_size + kTagSize + kAuthenticatorSize;
}

struct AckEntry {
  std::uint32_t segment = 0;
  std::uint16_t rank = 0;
  bool decoded = false;
  bool operator==(const AckEntry&) const = default;
};

namespace ack_flags {
inline constexpr std::uint8_t complete = 1;
inline constexpr std::uint8_t final_seen = 2;
}  // namespace ack_flags

struct AckBody {
  std::uint64_t largest = 0;
  std::uint32_t ack_delay_us = 0;
  std::uint32_t received = 0;
  std::uint32_t known = 0;
  std::uint32_t next_needed = 0;
  std::uint8_t flags = 0;
  std::vector<AckEntry> entries;  // increasing segments, all ≥ next_needed, at most 64
  // Which packets below `largest` were received: bit i of word w stands for largest − 1 − (64w + i).
  // Empty from a peer that does not say (the block is optional on the wire), at most 16 words.
  std::vector<std::uint64_t> history;
};
// Whether the ACK says packet `number` was received; without a history, every number up to largest.
bool acknowledges(const AckBody& ack, std::uint64_t number);
// How many of the `span` packets up to the ACK's largest (largest − span, largest] it says were received;
// span at most 1 + 64 · history words.
std::uint64_t acknowledged_of_last(const AckBody& ack, std::uint64_t span);
void write_body(Writer& w, const AckBody& body);
Parsed<AckBody> decode_ack_body(std::span<const std::uint8_t> body);

// path_too_slow: a server's circuit breaker ended a paced session whose path persistently carried less
// than the stream needs; the body then says how much arrived and how much was needed.
enum class ByeReason : std::uint8_t { done = 0, shutdown = 1, idle_timeout = 2, protocol_error = 3, path_too_slow = 4 };
struct ByeBody {
  ByeReason reason = ByeReason::done;
  std::uint32_t measured_kbps = 0, needed_kbps = 0;  // path_too_slow only
};
void write_body(Writer& w, const ByeBody& body);
Parsed<ByeBody> decode_bye_body(std::span<const std::uint8_t> body);

}  // namespace ncast::proto
