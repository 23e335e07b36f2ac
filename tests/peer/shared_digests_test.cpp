// SharedDigests: a shared part's SHA-256 is reused only for the very same octets, and a session's
// authenticator is still its own.
#include "peer/shared_digests.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
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

TEST(SharedDigests, TheSameOctetsAreHashedOnce) {
  SharedDigests cache(64);
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
TEST(SharedDigests, AgreeingKeysDoNotShareADigest) {
  SharedDigests cache(1);
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
TEST(SharedDigests, EachSessionStillChecksItsOwnAuthenticator) {
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
  SharedDigests cache;
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

}  // namespace
}  // namespace ncast::peer
