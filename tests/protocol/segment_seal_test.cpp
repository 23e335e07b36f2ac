// The origin's signatures over a stream: the certificate binds the stream's identity to the origin's
// key, and a seal binds every descriptor up to its end (and whether the table ends there); nothing
// else verifies.
#include "protocol/segment_seal.hpp"

#include <gtest/gtest.h>

#include <random>

namespace ncast::proto {
namespace {

ManifestBody certified(const Ed25519Identity& origin) {
  ManifestBody m;
  m.stream_id = 7;
  m.name = "show";
  m.n = 128;
  m.symbol_size = 1024;
  m.stream_flags = stream_flags::live;
  m.origin = origin.public_key();
  m.certificate = certify(origin, stream_identity(m));
  return m;
}

std::vector<SegmentDescriptor> table(std::size_t count, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<SegmentDescriptor> t(count);
  for (auto& d : t) {
    d.size = 1 + static_cast<std::uint32_t>(rng() % 131072);
    for (auto& x : d.hash) x = static_cast<std::uint8_t>(rng());
  }
  return t;
}

Sha256Digest chain_to(const ManifestBody& m, const std::vector<SegmentDescriptor>& t, std::size_t end) {
  Sha256Digest c = chain_start(stream_identity(m));
  for (std::size_t i = 0; i < end; ++i) c = chain_next(c, static_cast<std::uint32_t>(i), t[i]);
  return c;
}

TEST(SegmentSeal, TheCertificateBindsTheStreamToItsOrigin) {
  const auto origin = Ed25519Identity::generate(), other = Ed25519Identity::generate();
  const ManifestBody m = certified(origin);
  EXPECT_TRUE(certificate_verifies(m));
  const auto changed = [&](auto&& change) {
    ManifestBody c = m;
    change(c);
    return certificate_verifies(c);
  };
  EXPECT_FALSE(changed([](ManifestBody& c) { c.stream_id = 8; }));
  EXPECT_FALSE(changed([](ManifestBody& c) { c.name = "shows"; }));
  EXPECT_FALSE(changed([](ManifestBody& c) { c.n = 64; }));
  EXPECT_FALSE(changed([](ManifestBody& c) { c.symbol_size = 1200; }));
  EXPECT_FALSE(changed([](ManifestBody& c) { c.stream_flags = 0; }));
  EXPECT_FALSE(changed([&](ManifestBody& c) { c.origin = other.public_key(); }));  // another key named
  EXPECT_TRUE(changed([](ManifestBody& c) { c.start_segment = 9; }));              // session terms are not bound
  // Another origin's certificate of the same stream is its own, valid one.
  EXPECT_TRUE(certificate_verifies(certified(other)));
}

TEST(SegmentSeal, ASealCoversEveryDescriptorUpToItsEndAndWhetherTheTableEnds) {
  const auto origin = Ed25519Identity::generate(), relay = Ed25519Identity::generate();
  const ManifestBody m = certified(origin);
  const auto t = table(64, 1);
  const Signature at40 = seal_table(origin, 40, false, chain_to(m, t, 40));
  EXPECT_TRUE(seal_verifies(origin.public_key(), 40, false, chain_to(m, t, 40), at40));
  EXPECT_FALSE(seal_verifies(origin.public_key(), 40, true, chain_to(m, t, 40), at40));  // not the end
  EXPECT_FALSE(seal_verifies(origin.public_key(), 39, false, chain_to(m, t, 39), at40));
  EXPECT_FALSE(seal_verifies(relay.public_key(), 40, false, chain_to(m, t, 40), at40));
  for (const std::size_t changed : {0u, 20u, 39u}) {
    auto forged = t;
    forged[changed].hash[5] ^= 1;
    EXPECT_FALSE(seal_verifies(origin.public_key(), 40, false, chain_to(m, forged, 40), at40)) << changed;
    forged = t;
    ++forged[changed].size;
    EXPECT_FALSE(seal_verifies(origin.public_key(), 40, false, chain_to(m, forged, 40), at40)) << changed;
  }
  // The same table under another stream's identity is another chain.
  ManifestBody renamed = m;
  renamed.name = "other";
  EXPECT_FALSE(seal_verifies(origin.public_key(), 40, false, chain_to(renamed, t, 40), at40));
  // Only the origin can seal: a relay's seal of the origin's very table is refused under the origin's key.
  EXPECT_FALSE(seal_verifies(origin.public_key(), 40, false, chain_to(m, t, 40),
                             seal_table(relay, 40, false, chain_to(m, t, 40))));
  const Signature final64 = seal_table(origin, 64, true, chain_to(m, t, 64));
  EXPECT_TRUE(seal_verifies(origin.public_key(), 64, true, chain_to(m, t, 64), final64));
  EXPECT_FALSE(seal_verifies(origin.public_key(), 64, false, chain_to(m, t, 64), final64));
}

// Found by the signed_table fuzz target: OpenSSL accepts an all-zero key (a point of order 4) with an
// all-zero signature for about one message in four. No key of small order verifies anything here.
TEST(SegmentSeal, KeysOfSmallOrderVerifyNothing) {
  const auto origin = Ed25519Identity::generate();
  ManifestBody m = certified(origin);
  m.certificate = {};
  int certificates = 0, seals = 0;
  for (std::uint8_t flip : {0x00, 0x80}) {
    m.origin = {};
    m.origin[31] = flip;
    for (std::uint32_t id = 0; id < 32; ++id) {
      m.stream_id = id;
      certificates += certificate_verifies(m) ? 1 : 0;
      seals += seal_verifies(m.origin, id, false, chain_start(stream_identity(m)), {}) ? 1 : 0;
    }
  }
  EXPECT_EQ(certificates, 0);
  EXPECT_EQ(seals, 0);
}

TEST(SegmentSeal, TheManifestCarriesTheCertificate) {
  const auto origin = Ed25519Identity::generate();
  ManifestBody m = certified(origin);
  m.window = 8;
  m.stream_key.assign(16, 1);
  std::vector<std::uint8_t> buf(400);
  Writer w(buf);
  write_body(w, m);
  buf.resize(w.size());
  auto back = decode_manifest_body(buf);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->origin, origin.public_key());
  EXPECT_EQ(back->certificate, m.certificate);
  EXPECT_TRUE(certificate_verifies(*back));
  EXPECT_FALSE(decode_manifest_body(std::span(buf).first(buf.size() - 1)));
}

}  // namespace
}  // namespace ncast::proto
