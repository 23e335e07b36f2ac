#include "protocol/coded_seal.hpp"

#include <openssl/crypto.h>

#include <cstring>

namespace ncast::proto {

StreamKey StreamKey::generate(Suite suite) {
  StreamKey k{suite, std::vector<std::uint8_t>(key_size(suite))};
  random_bytes(k.key);
  return k;
}

Aead stream_aead(const StreamKey& key, Aead::Direction direction) {
  // The nonce of every stream packet is given whole (its coded header): the iv is not used.
  static constexpr std::array<std::uint8_t, kIvSize> kUnusedIv{};
  return Aead(key.suite, key.key, kUnusedIv, direction);
}

void seal_shared(Aead& stream, std::span<std::uint8_t> shared) {
  if (shared.size() < kMinSharedSize) throw std::length_error("shared part shorter than its header and tag");
  const std::span<const std::uint8_t, kIvSize> nonce(shared.data(), kIvSize);
  stream.seal_at(nonce, shared.data(), kCodedHeaderSize, shared.size() - kMinSharedSize);
}

std::optional<std::span<const std::uint8_t>> open_shared(Aead& stream, std::span<std::uint8_t> shared) {
  if (shared.size() < kMinSharedSize) return std::nullopt;
  const std::span<const std::uint8_t, kIvSize> nonce(shared.data(), kIvSize);
  if (!stream.open_at(nonce, shared.data(), kCodedHeaderSize, shared.size() - kMinSharedSize)) return std::nullopt;
  return shared.first(shared.size() - kTagSize);
}

Authenticator authenticator(const Cmac& mac, std::span<const std::uint8_t, kHeaderSize> header,
                            const Sha256Digest& shared_digest) {
  const Block full = mac.mac(header, shared_digest);
  Authenticator out{};
  std::memcpy(out.data(), full.data(), out.size());
  return out;
}

CodedEnvelope coded_envelope(const Cmac& mac, std::uint64_t session, std::uint64_t number,
                             const Sha256Digest& shared_digest) {
  CodedEnvelope e;
  Writer w(e.header);
  write_header(w, {PacketType::coded, session, number});
  e.tail = authenticator(mac, e.header, shared_digest);
  return e;
}

std::size_t write_coded_packet(std::span<std::uint8_t> out, const CodedEnvelope& envelope,
                               std::span<const std::uint8_t> shared) {
  Writer w(out);
  w.bytes(envelope.header);
  w.bytes(shared);
  w.bytes(envelope.tail);
  return w.ok() ? w.size() : 0;
}

std::optional<std::span<std::uint8_t>> coded_shared_part(std::span<std::uint8_t> datagram) {
  if (datagram.size() < kHeaderSize + kMinSharedSize + kAuthenticatorSize) return std::nullopt;
  return datagram.subspan(kHeaderSize, datagram.size() - kHeaderSize - kAuthenticatorSize);
}

bool coded_authentic(std::span<const std::uint8_t> datagram, const Cmac& mac) {
  return coded_authentic(datagram, mac, [](std::span<const std::uint8_t> shared) { return sha256(shared); });
}

bool coded_authentic(std::span<const std::uint8_t> datagram, const Cmac& mac,
                     const std::function<Sha256Digest(std::span<const std::uint8_t>)>& digest) {
  if (datagram.size() < kHeaderSize + kMinSharedSize + kAuthenticatorSize) return false;
  const auto shared = datagram.subspan(kHeaderSize, datagram.size() - kHeaderSize - kAuthenticatorSize);
  const Authenticator expected =
      authenticator(mac, std::span<const std::uint8_t, kHeaderSize>(datagram.data(), kHeaderSize), digest(shared));
  return CRYPTO_memcmp(expected.data(), datagram.data() + datagram.size() - kAuthenticatorSize, expected.size()) == 0;
}

}  // namespace ncast::proto
