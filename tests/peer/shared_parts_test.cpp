// SharedParts: a shared part's SHA-256 and what opening it gave are reused only for the very same octets
// (an open only under the same key), and a session's authenticator is still its own.
#include "peer/shared_parts.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "protocol/cmac.hpp"
#include "protocol/coded_seal.hpp"

namespace ncast::peer {
namespace {

std::vector<std::uint8_t> part(std::size_t size, std::uint8_t seed) {
  std::vector<std::uint8_t> p(size);
  for (std::size_t i = 0; i < size; ++i) p[i] = static_cast<std::uint8_t>(seed + i * 7);
  return p;
}

TEST(SharedParts, TheSameOctetsAreHashedOnce) {
  SharedParts cache(64);
  const auto a = part(1100, 1), b = part(1100, 2);
  EXPECT_EQ(cache.digest(a), proto::sha256(a));
  EXPECT_EQ(cache.digest(b), proto::sha256(b));
  EXPECT_EQ(cache.digest(a), proto::sha256(a));
  EXPECT_EQ(cache.digest(b), proto::sha256(b));
  EXPECT_EQ(cache.misses(), 2u);
  EXPECT_EQ(cache.hits(), 2u);
}

// Parts that agree in what finds their slot (length, first and last 16 octets) but not in between:
// each gets its own digest, whatever the slot held.
TEST(SharedParts, AgreeingKeysDoNotShareADigest) {
  SharedParts cache(1);
  const auto a = part(1100, 3);
  auto b = a;
  b[500] ^= 1;
  auto c = a;
  c[16] ^= 0x80;
  EXPECT_EQ(cache.digest(a), proto::sha256(a));
  EXPECT_EQ(cache.digest(b), proto::sha256(b));
  EXPECT_EQ(cache.digest(c), proto::sha256(c));
  EXPECT_EQ(cache.digest(std::span(a).first(1099)), proto::sha256(std::span(a).first(1099)));
  EXPECT_NE(proto::sha256(a), proto::sha256(b));
  EXPECT_EQ(cache.hits(), 0u);
}

// One sealed shared part sent to two sessions: with the cache each still accepts only its own
// envelope, and a shared part altered after the first check is caught.
TEST(SharedParts, EachSessionStillChecksItsOwnAuthenticator) {
  const std::array<std::uint8_t, 16> ka{1}, kb{2};
  const proto::Cmac mac_a(ka), mac_b(kb);
  const auto shared = part(proto::kMinSharedSize + 1024, 9);
  const auto digest = proto::sha256(shared);
  auto packet = [&](const proto::Cmac& mac, std::uint64_t session) {
    std::vector<std::uint8_t> d(proto::kHeaderSize + shared.size() + proto::kAuthenticatorSize);
    EXPECT_EQ(proto::write_coded_packet(d, proto::coded_envelope(mac, session, 7, digest), shared), d.size());
    return d;
  };
  const auto to_a = packet(mac_a, 10), to_b = packet(mac_b, 11);
  SharedParts cache;
  auto cached = [&](std::span<const std::uint8_t> s) { return cache.digest(s); };
  EXPECT_TRUE(proto::coded_authentic(to_a, mac_a, cached));
  EXPECT_TRUE(proto::coded_authentic(to_b, mac_b, cached));
  EXPECT_FALSE(proto::coded_authentic(to_a, mac_b, cached));  // a's packet toward b
  EXPECT_FALSE(proto::coded_authentic(to_b, mac_a, cached));
  auto altered = to_b;
  altered[proto::kHeaderSize + 600] ^= 1;
  EXPECT_FALSE(proto::coded_authentic(altered, mac_b, cached));
  EXPECT_TRUE(proto::coded_authentic(to_b, mac_b, cached));
  // The three checks after the first; the altered part took the slot, so the last one hashed again.
  EXPECT_EQ(cache.hits(), 3u);
}

// A stream's sealed symbol: coded header (the nonce), body, tag.
std::vector<std::uint8_t> sealed(const proto::StreamKey& key, std::uint8_t seed) {
  auto shared = part(proto::kMinSharedSize + 1024, seed);
  auto aead = proto::stream_aead(key, proto::Aead::Direction::seal);
  proto::seal_shared(aead, shared);
  return shared;
}

std::vector<std::uint8_t> opened_alone(const proto::StreamKey& key, std::vector<std::uint8_t> shared) {
  auto aead = proto::stream_aead(key, proto::Aead::Direction::open);
  const auto body = proto::open_shared(aead, shared);
  EXPECT_TRUE(body.has_value());
  return body ? std::vector<std::uint8_t>(body->begin(), body->end()) : std::vector<std::uint8_t>{};
}

// Two peers' copies of one sealed part: the second gets what the first's open gave, without opening.
TEST(SharedParts, APartIsOpenedOnceUnderItsKey) {
  const auto key = proto::StreamKey::generate(proto::Suite::aes128_gcm);
  const auto shared = sealed(key, 5);
  const auto plain = opened_alone(key, shared);
  SharedParts cache;
  for (int peer = 0; peer < 3; ++peer) {
    auto copy = shared;
    auto aead = proto::stream_aead(key, proto::Aead::Direction::open);
    cache.digest(copy);  // as the peer's authenticator check does first
    const auto body = cache.open(copy, key.key, aead);
    ASSERT_TRUE(body.has_value()) << peer;
    EXPECT_TRUE(std::equal(body->begin(), body->end(), plain.begin(), plain.end())) << peer;
    EXPECT_EQ(body->data(), copy.data());  // in the datagram, as an open in place
  }
  EXPECT_EQ(cache.opens_reused(), 2u);
}

// The same octets under another key (or suite) are opened afresh, and fail; so do altered octets, and
// the part the slot holds stays good for its own key.
TEST(SharedParts, AnotherKeyOrOtherOctetsAreNotGivenTheOpenedBody) {
  const auto key = proto::StreamKey::generate(proto::Suite::aes128_gcm);
  const auto other = proto::StreamKey::generate(proto::Suite::aes128_gcm);
  const auto chacha = proto::StreamKey::generate(proto::Suite::chacha20_poly1305);
  const auto shared = sealed(key, 6);
  const auto plain = opened_alone(key, shared);
  SharedParts cache(1);
  auto open = [&](const proto::StreamKey& k, std::vector<std::uint8_t> copy) {
    auto aead = proto::stream_aead(k, proto::Aead::Direction::open);
    cache.digest(copy);
    const auto body = cache.open(copy, k.key, aead);
    return body ? std::optional(std::vector<std::uint8_t>(body->begin(), body->end())) : std::nullopt;
  };
  EXPECT_EQ(open(key, shared), plain);
  EXPECT_EQ(open(other, shared), std::nullopt);
  EXPECT_EQ(open(chacha, shared), std::nullopt);
  auto altered = shared;
  altered[proto::kCodedHeaderSize + 300] ^= 1;
  EXPECT_EQ(open(key, altered), std::nullopt);
  EXPECT_EQ(open(key, shared), plain);  // the altered part took the slot: opened again
  EXPECT_EQ(open(key, shared), plain);
  EXPECT_EQ(cache.opens_reused(), 1u);
}

// Without the digest first (the slot holds other octets), open is a plain open: right, and not kept.
TEST(SharedParts, AnOpenOfOctetsTheSlotDoesNotHoldIsAPlainOpen) {
  const auto key = proto::StreamKey::generate(proto::Suite::aes128_gcm);
  const auto shared = sealed(key, 7);
  const auto plain = opened_alone(key, shared);
  SharedParts cache(1);
  for (int i = 0; i < 2; ++i) {
    auto copy = shared;
    auto aead = proto::stream_aead(key, proto::Aead::Direction::open);
    const auto body = cache.open(copy, key.key, aead);
    ASSERT_TRUE(body.has_value());
    EXPECT_TRUE(std::equal(body->begin(), body->end(), plain.begin(), plain.end()));
  }
  EXPECT_EQ(cache.opens_reused(), 0u);
}

// An open right after the digest of the same octets does not compare them again; any other open does,
// also one of other octets put where the digested ones were (the receive buffer is reused).
TEST(SharedParts, OnlyTheOpenRightAfterItsDigestSkipsTheComparison) {
  const auto key = proto::StreamKey::generate(proto::Suite::aes128_gcm);
  const auto shared = sealed(key, 8);
  const auto plain = opened_alone(key, shared);
  SharedParts cache(1);
  auto open = [&](std::vector<std::uint8_t>& buffer) {
    auto aead = proto::stream_aead(key, proto::Aead::Direction::open);
    const auto body = cache.open(buffer, key.key, aead);
    return body ? std::optional(std::vector<std::uint8_t>(body->begin(), body->end())) : std::nullopt;
  };
  auto buffer = shared;
  cache.digest(buffer);
  EXPECT_EQ(open(buffer), plain);  // opened and kept
  buffer = shared;
  cache.digest(buffer);
  EXPECT_EQ(open(buffer), plain);  // reused
  EXPECT_EQ(cache.opens_reused(), 1u);
  buffer = shared;
  buffer[proto::kCodedHeaderSize + 100] ^= 1;  // other octets in the same place, not digested
  EXPECT_EQ(open(buffer), std::nullopt);
  EXPECT_EQ(cache.opens_reused(), 1u);
}

}  // namespace
}  // namespace ncast::peer
