#pragma once
// Version 2 CODED packets (docs/protocol.md section 2.8): "seal once, authenticate per peer". A coded
// symbol's *shared part* (coded header in clear, coefficients and payload encrypted, the stream tag) is
// sealed once with the stream's key and sent to every session of the stream as the same octets; each
// session wraps it in its 20-octet header and an 8-octet authenticator, AES-128-CMAC under the session's
// MAC key of the header and the shared part's SHA-256. Subscribers know the stream key; the
// authenticator is what keeps one of them from forging packets toward another (docs/security.md).
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "protocol/cmac.hpp"
#include "protocol/crypto.hpp"
#include "protocol/packets.hpp"

namespace ncast::proto {

// The smallest shared part: a coded header and a tag around an empty body.
inline constexpr std::size_t kMinSharedSize = kCodedHeaderSize + kTagSize;
using Authenticator = std::array<std::uint8_t, kAuthenticatorSize>;

// A stream's key of one server process, random per stream, given to each peer in its MANIFEST.
struct StreamKey {
  Suite suite = Suite::aes128_gcm;
  std::vector<std::uint8_t> key;
  static StreamKey generate(Suite suite);
};
// The stream key's AEAD context in one direction.
Aead stream_aead(const StreamKey& key, Aead::Direction direction);

// shared = coded header || body || room for the tag. Encrypts the body in place under the stream key, the
// coded header the nonce and the associated data, and writes the tag. The caller makes every coded header
// it seals under one key distinct (docs/protocol.md section 6).
void seal_shared(Aead& stream, std::span<std::uint8_t> shared);
// Opens a shared part in place; the CODED body (coded header, coefficients, payload) or nullopt.
std::optional<std::span<const std::uint8_t>> open_shared(Aead& stream, std::span<std::uint8_t> shared);

// CMAC(header || SHA-256(shared part)), its first 8 octets.
Authenticator authenticator(const Cmac& mac, std::span<const std::uint8_t, kHeaderSize> header,
                            const Sha256Digest& shared_digest);

// What a session adds around a shared part: its header and authenticator.
struct CodedEnvelope {
  std::array<std::uint8_t, kHeaderSize> header{};
  Authenticator tail{};
};
CodedEnvelope coded_envelope(const Cmac& mac, std::uint64_t session, std::uint64_t number,
                             const Sha256Digest& shared_digest);
// header || shared || authenticator into out; its length, or 0 when it does not fit.
std::size_t write_coded_packet(std::span<std::uint8_t> out, const CodedEnvelope& envelope,
                               std::span<const std::uint8_t> shared);

// The shared part of a CODED datagram, or nullopt when the datagram cannot hold one.
std::optional<std::span<std::uint8_t>> coded_shared_part(std::span<std::uint8_t> datagram);
// Whether a CODED datagram's authenticator verifies under this session's MAC key (constant-time compare).
bool coded_authentic(std::span<const std::uint8_t> datagram, const Cmac& mac);
// The same, with the shared part's SHA-256 from `digest` (given the shared part: sha256, or a cache of
// digests that many sessions share, peer/shared_parts.hpp).
bool coded_authentic(std::span<const std::uint8_t> datagram, const Cmac& mac,
                     const std::function<Sha256Digest(std::span<const std::uint8_t>)>& digest);

}  // namespace ncast::proto
