#include "protocol/handshake.hpp"

#include <openssl/crypto.h>

#include <algorithm>
#include <cstring>

namespace ncast::proto {
namespace {
constexpr char kKeysLabel[] = "ncast keys v2";
constexpr char kSignLabel[] = "ncast manifest v2";
}  // namespace

SessionKeys derive_session_keys(Suite suite, std::span<const std::uint8_t> shared, const Nonce& nonce,
                                const Nonce& server_nonce, std::span<const std::uint8_t> join_datagram,
                                std::span<const std::uint8_t> manifest_aad) {
  std::vector<std::uint8_t> transcript(join_datagram.begin(), join_datagram.end());
  transcript.insert(transcript.end(), manifest_aad.begin(), manifest_aad.end());
  const Sha256Digest th = sha256(transcript);

  std::array<std::uint8_t, 32> salt{};
  std::memcpy(salt.data(), nonce.data(), 16);
  std::memcpy(salt.data() + 16, server_nonce.data(), 16);
  constexpr std::size_t kLabelLen = sizeof kKeysLabel - 1;
  std::array<std::uint8_t, kLabelLen + 32> info{};
  std::memcpy(info.data(), kKeysLabel, kLabelLen);
  std::memcpy(info.data() + kLabelLen, th.data(), th.size());

  const std::size_t k = key_size(suite);
  std::vector<std::uint8_t> okm(2 * (k + kIvSize) + 16);
  hkdf_sha256(salt, shared, info, okm);

  SessionKeys keys;
  keys.suite = suite;
  auto at = okm.begin();
  keys.server_key.assign(at, at + static_cast<long>(k));
  at += static_cast<long>(k);
  std::copy(at, at + kIvSize, keys.server_iv.begin());
  at += kIvSize;
  keys.peer_key.assign(at, at + static_cast<long>(k));
  at += static_cast<long>(k);
  std::copy(at, at + kIvSize, keys.peer_iv.begin());
  at += kIvSize;
  std::copy(at, at + 16, keys.coded_mac.begin());
  return keys;
}

std::vector<std::uint8_t> manifest_signed_message(std::span<const std::uint8_t> join_datagram,
                                                  std::span<const std::uint8_t> manifest_signed_part) {
  constexpr std::size_t kLabelLen = sizeof kSignLabel - 1;
  const auto join_hash = sha256(join_datagram);
  std::vector<std::uint8_t> m(kLabelLen + join_hash.size() + manifest_signed_part.size());
  std::memcpy(m.data(), kSignLabel, kLabelLen);
  std::memcpy(m.data() + kLabelLen, join_hash.data(), join_hash.size());
  std::memcpy(m.data() + kLabelLen + join_hash.size(), manifest_signed_part.data(), manifest_signed_part.size());
  return m;
}

std::optional<Suite> choose_suite(std::span<const std::uint8_t> offered) {
  for (auto id : offered)
    if (auto s = suite_from_wire(id)) return s;
  return std::nullopt;
}

std::optional<ServerAccept> server_accept(std::span<const std::uint8_t> join_datagram, const Join& join,
                                          const Ed25519Identity& identity, Suite suite, std::uint64_t session,
                                          const ManifestBody& body) {
  X25519KeyPair ephemeral;
  auto shared = ephemeral.agree(join.peer_public);
  if (!shared) return std::nullopt;

  ManifestHandshake hs;
  hs.nonce = join.nonce;
  random_bytes(hs.server_nonce);
  hs.server_public = ephemeral.public_key();
  hs.identity = identity.public_key();
  hs.suite = static_cast<std::uint8_t>(suite);

  std::vector<std::uint8_t> buf(body.max_datagram);
  Writer w(buf);
  write_header(w, {PacketType::manifest, session, 0});
  write_manifest_handshake(w, hs);  // signature still zero
  hs.signature = identity.sign(manifest_signed_message(join_datagram, {buf.data(), kManifestSignedSize}));
  std::memcpy(buf.data() + kManifestSignedSize, hs.signature.data(), hs.signature.size());

  ServerAccept out;
  out.keys =
      derive_session_keys(suite, *shared, hs.nonce, hs.server_nonce, join_datagram, {buf.data(), kManifestAadSize});
  write_body(w, body);
  const std::size_t body_len = w.size() - kManifestAadSize;
  w.reserve(kTagSize);
  if (!w.ok()) throw std::length_error("MANIFEST does not fit the datagram size");
  Aead aead(suite, out.keys.server_key, out.keys.server_iv, Aead::Direction::seal);
  aead.seal(0, buf.data(), kManifestAadSize, body_len);
  buf.resize(w.size());
  out.manifest = std::move(buf);
  return out;
}

PeerHandshake::PeerHandshake(Join join) : join_(std::move(join)) {
  random_bytes(join_.nonce);
  join_.peer_public = key_.public_key();
}

std::vector<std::uint8_t> PeerHandshake::hello() const {
  Hello h;
  h.nonce = join_.nonce;
  h.stream = join_.stream;
  return encode(h);
}

std::optional<std::vector<std::uint8_t>> PeerHandshake::on_retry(const Retry& retry) {
  if (CRYPTO_memcmp(retry.nonce.data(), join_.nonce.data(), join_.nonce.size()) != 0) return std::nullopt;
  if (!joins_.empty() && retry.token == join_.token) return joins_.back();
  join_.token = retry.token;
  if (joins_.size() == kMaxJoins) joins_.erase(joins_.begin());
  // Full size, as QUIC pads its Initial: a server sends at most 3x what a session received before its
  // first ACK, and 3x a bare JOIN (~100 octets) holds the MANIFEST but not the segment descriptors,
  // which would then wait a round trip for that ACK.
  joins_.push_back(encode(join_, kMaxClearSize));
  return joins_.back();
}

Parsed<PeerHandshake::Accepted> PeerHandshake::on_manifest(std::span<std::uint8_t> datagram,
                                                           const std::optional<PublicKey>& pinned) const {
  if (joins_.empty()) return DropReason::unexpected;
  auto header = parse_header(datagram);
  if (!header) return header.error();
  return on_manifest(*header, datagram, pinned);
}

Parsed<PeerHandshake::Accepted> PeerHandshake::on_manifest(const Header& header, std::span<std::uint8_t> datagram,
                                                           const std::optional<PublicKey>& pinned) const {
  if (joins_.empty()) return DropReason::unexpected;
  if (header.type != PacketType::manifest) return DropReason::bad_type;
  if (header.number != 0) return DropReason::malformed;
  if (datagram.size() < kManifestAadSize + kTagSize) return DropReason::truncated;
  Reader r(datagram.subspan(kHeaderSize, kManifestAadSize - kHeaderSize));
  auto hs = read_manifest_handshake(r);
  if (!hs) return hs.error();
  if (CRYPTO_memcmp(hs->nonce.data(), join_.nonce.data(), join_.nonce.size()) != 0) return DropReason::unexpected;
  if (pinned && CRYPTO_memcmp(pinned->data(), hs->identity.data(), pinned->size()) != 0) return DropReason::auth;
  const auto suite = suite_from_wire(hs->suite);
  if (!suite || std::find(join_.suites.begin(), join_.suites.end(), hs->suite) == join_.suites.end())
    return DropReason::malformed;
  // The server signed the JOIN it made the session from: usually the last one sent, but an answer to
  // an earlier one can arrive after a later RETRY changed the token.
  const auto signed_join = std::find_if(joins_.rbegin(), joins_.rend(), [&](const std::vector<std::uint8_t>& join) {
    return ed25519_verify(hs->identity, manifest_signed_message(join, datagram.first(kManifestSignedSize)),
                          hs->signature);
  });
  if (signed_join == joins_.rend()) return DropReason::auth;
  auto shared = key_.agree(hs->server_public);
  if (!shared) return DropReason::auth;

  Accepted out;
  out.header = header;
  out.handshake = *hs;
  out.keys =
      derive_session_keys(*suite, *shared, hs->nonce, hs->server_nonce, *signed_join, datagram.first(kManifestAadSize));
  Aead aead(*suite, out.keys.server_key, out.keys.server_iv, Aead::Direction::open);
  const std::size_t body_len = datagram.size() - kManifestAadSize - kTagSize;
  if (!aead.open(0, datagram.data(), kManifestAadSize, body_len)) return DropReason::auth;
  auto body = decode_manifest_body(datagram.subspan(kManifestAadSize, body_len));
  if (!body) return body.error();
  out.body = *body;
  return out;
}

}  // namespace ncast::proto
