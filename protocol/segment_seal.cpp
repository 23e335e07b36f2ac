#include "protocol/segment_seal.hpp"

#include <algorithm>
#include <array>
#include <string_view>

#include "protocol/wire.hpp"

namespace ncast::proto {
namespace {

constexpr std::string_view kStreamLabel = "ncast stream v1";
constexpr std::string_view kSegmentsLabel = "ncast segments v1";

// Keys of small order (libsodium's list, the sign bit aside): with one, a signature of R = a small-order
// point and S = 0 verifies for a good share of all messages (OpenSSL accepts such keys), so anyone could
// "sign" as that origin.
constexpr std::array<std::array<std::uint8_t, 32>, 7> kSmallOrder{{
    {0x00},
    {0x01},
    {0x26, 0xe8, 0x95, 0x8f, 0xc2, 0xb2, 0x27, 0xb0, 0x45, 0xc3, 0xf4, 0x89, 0xf2, 0xef, 0x98, 0xf0,
     0xd5, 0xdf, 0xac, 0x05, 0xd3, 0xc6, 0x33, 0x39, 0xb1, 0x38, 0x02, 0x88, 0x6d, 0x53, 0xfc, 0x05},
    {0xc7, 0x17, 0x6a, 0x70, 0x3d, 0x4d, 0xd8, 0x4f, 0xba, 0x3c, 0x0b, 0x76, 0x0d, 0x10, 0x67, 0x0f,
     0x2a, 0x20, 0x53, 0xfa, 0x2c, 0x39, 0xcc, 0xc6, 0x4e, 0xc7, 0xfd, 0x77, 0x92, 0xac, 0x03, 0x7a},
    {0xec, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
     0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f},
    {0xed, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
     0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f},
    {0xee, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
     0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f},
}};

bool small_order(const PublicKey& key) {
  return std::any_of(kSmallOrder.begin(), kSmallOrder.end(), [&](const auto& weak) {
    return std::equal(key.begin(), key.end() - 1, weak.begin()) && (key[31] & 0x7f) == weak[31];
  });
}

std::span<const std::uint8_t> octets(std::string_view s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

// The seal's message: label, end, final flag, chain.
std::array<std::uint8_t, kSegmentsLabel.size() + 4 + 1 + 32> seal_message(std::uint32_t end, bool final,
                                                                          const Sha256Digest& chain) {
  std::array<std::uint8_t, kSegmentsLabel.size() + 4 + 1 + 32> m{};
  Writer w(m);
  w.bytes(octets(kSegmentsLabel));
  w.u32(end);
  w.u8(final ? 1 : 0);
  w.bytes(chain);
  return m;
}

}  // namespace

StreamIdentity stream_identity(const ManifestBody& body) {
  return {body.stream_id, body.name, body.n, body.symbol_size, (body.stream_flags & stream_flags::live) != 0};
}

std::vector<std::uint8_t> certificate_message(const StreamIdentity& s) {
  std::vector<std::uint8_t> m(kStreamLabel.size() + 4 + 1 + s.name.size() + 2 + 4 + 1);
  Writer w(m);
  w.bytes(octets(kStreamLabel));
  w.u32(s.stream_id);
  w.short_string(s.name);
  w.u16(s.n);
  w.u32(s.symbol_size);
  w.u8(s.live ? 1 : 0);
  if (!w.ok()) throw std::invalid_argument("stream name must be at most 255 octets");
  return m;
}

Signature certify(const Ed25519Identity& origin, const StreamIdentity& stream) {
  return origin.sign(certificate_message(stream));
}

bool certificate_verifies(const ManifestBody& body) {
  return !small_order(body.origin) &&
         ed25519_verify(body.origin, certificate_message(stream_identity(body)), body.certificate);
}

Sha256Digest chain_start(const StreamIdentity& stream) { return sha256(certificate_message(stream)); }

Sha256Digest chain_next(const Sha256Digest& chain, std::uint32_t index, const SegmentDescriptor& d) {
  std::array<std::uint8_t, 32 + 4 + kDescriptorSize> m{};
  Writer w(m);
  w.bytes(chain);
  w.u32(index);
  w.u32(d.size);
  w.bytes(d.hash);
  return sha256(m);
}

Signature seal_table(const Ed25519Identity& origin, std::uint32_t end, bool final, const Sha256Digest& chain) {
  return origin.sign(seal_message(end, final, chain));
}

bool seal_verifies(const PublicKey& origin, std::uint32_t end, bool final, const Sha256Digest& chain,
                   const Signature& seal) {
  return !small_order(origin) && ed25519_verify(origin, seal_message(end, final, chain), seal);
}

}  // namespace ncast::proto
