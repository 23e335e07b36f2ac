#pragma once
// The key exchange of docs/protocol.md sections 2.6 and 4, both sides: the server answers a valid JOIN
// with a signed MANIFEST and the session keys; the peer checks the MANIFEST and derives the same keys.
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "protocol/crypto.hpp"
#include "protocol/packets.hpp"

namespace ncast::proto {

struct SessionKeys {
  Suite suite = Suite::aes128_gcm;
  std::vector<std::uint8_t> server_key, peer_key;
  std::array<std::uint8_t, kIvSize> server_iv{}, peer_iv{};
  // The AES-128-CMAC key of the server's CODED authenticators (protocol/coded_seal.hpp).
  std::array<std::uint8_t, 16> coded_mac{};
};

// okm = HKDF-SHA-256(nonce || server_nonce, shared, "ncast keys v2" || SHA-256(join || manifest_aad)).
SessionKeys derive_session_keys(Suite suite, std::span<const std::uint8_t> shared, const Nonce& nonce,
                                const Nonce& server_nonce, std::span<const std::uint8_t> join_datagram,
                                std::span<const std::uint8_t> manifest_aad);

// "ncast manifest v2" || SHA-256(join) || the MANIFEST's first 117 octets: what the identity signs.
std::vector<std::uint8_t> manifest_signed_message(std::span<const std::uint8_t> join_datagram,
                                                  std::span<const std::uint8_t> manifest_signed_part);

// The first suite of the peer's list that we support.
std::optional<Suite> choose_suite(std::span<const std::uint8_t> offered);

struct ServerAccept {
  std::vector<std::uint8_t> manifest;  // the datagram (packet number 0)
  SessionKeys keys;
};
// Builds the MANIFEST answering join_datagram (already decoded as join, token checked). nullopt when
// the peer's public key is of low order.
std::optional<ServerAccept> server_accept(std::span<const std::uint8_t> join_datagram, const Join& join,
                                          const Ed25519Identity& identity, Suite suite, std::uint64_t session,
                                          const ManifestBody& body);

// The peer's side of one handshake: its nonce and ephemeral key, the HELLO and JOIN it sends.
class PeerHandshake {
 public:
  // join holds the session parameters wanted; nonce, token and key are filled here.
  explicit PeerHandshake(Join join);

  const Nonce& nonce() const { return join_.nonce; }
  std::vector<std::uint8_t> hello() const;
  // The JOIN answering a RETRY for this handshake (same octets for every retransmission); nullopt if
  // the RETRY is not ours. A later RETRY with another token (the answer to a retransmitted HELLO, or
  // to a JOIN whose token expired) gives a new JOIN, but the earlier ones stay valid: the server may
  // have made its session from any of them.
  std::optional<std::vector<std::uint8_t>> on_retry(const Retry& retry);
  const std::vector<std::uint8_t>& join_datagram() const { return joins_.back(); }

  struct Accepted {
    Header header;
    ManifestHandshake handshake;
    ManifestBody body;
    SessionKeys keys;
  };
  // Checks a MANIFEST: our nonce, the pinned identity if any, the signature over one of the JOINs we
  // sent, the key agreement and the body's tag and ranges. The datagram is decrypted in place.
  Parsed<Accepted> on_manifest(std::span<std::uint8_t> datagram, const std::optional<PublicKey>& pinned) const;
  // The same, for a datagram whose header the caller parsed.
  Parsed<Accepted> on_manifest(const Header& header, std::span<std::uint8_t> datagram,
                               const std::optional<PublicKey>& pinned) const;

 private:
  static constexpr std::size_t kMaxJoins = 8;  // distinct JOINs kept, newest last

  Join join_;
  X25519KeyPair key_;
  std::vector<std::vector<std::uint8_t>> joins_;
};

}  // namespace ncast::proto
