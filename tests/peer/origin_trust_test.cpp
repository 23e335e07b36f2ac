// A peer takes its segment table only under its origin's seals: a relay cannot vouch for an origin,
// forged batches change nothing wherever they come first, a pinned key admits no other origin, and a
// relay forwards exactly the seals it received.
#include "peer/origin_trust.hpp"

#include <gtest/gtest.h>

#include <random>

#include "peer/stream_receiver.hpp"
#include "protocol/segment_seal.hpp"
#include "tests/peer/stream_source.hpp"

namespace ncast::peer {
namespace {

using testing::StreamSource;

std::vector<std::uint8_t> media(std::size_t size, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::uint8_t> m(size);
  for (auto& b : m) b = static_cast<std::uint8_t>(rng());
  return m;
}

proto::ManifestBody certified(proto::ManifestBody m, const proto::Ed25519Identity& origin) {
  m.origin = origin.public_key();
  m.certificate = proto::certify(origin, proto::stream_identity(m));
  return m;
}

// Descriptors [first, end) of s's table, sealed by `by` (final when end is the table's end).
proto::SegmentsBody batch(const StreamSource& s, const proto::ManifestBody& m, const proto::Ed25519Identity& by,
                          std::uint32_t first, std::uint32_t end) {
  proto::SegmentsBody all = s.segments(), b;
  b.first = first;
  b.segment_count = s.segment_count();
  b.descriptors.assign(all.descriptors.begin() + first, all.descriptors.begin() + end);
  const bool final = end == s.segment_count();
  b.stream_flags = final ? proto::stream_flags::final : 0;
  proto::Sha256Digest chain = proto::chain_start(proto::stream_identity(m));
  for (std::uint32_t i = 0; i < end; ++i) chain = proto::chain_next(chain, i, all.descriptors[i]);
  b.seal = proto::seal_table(by, end, final, chain);
  return b;
}

StreamReceiver receiver(std::optional<proto::PublicKey> pinned = std::nullopt) {
  StreamReceiver::Options o;
  o.origin_key = pinned;
  return StreamReceiver(o, [](std::span<const std::uint8_t>) {});
}

TEST(OriginTrust, ARelayCannotVouchForItsOriginAnOriginSessionCan) {
  const auto origin = proto::Ed25519Identity::generate(), relay = proto::Ed25519Identity::generate();
  OriginTrust trust;
  EXPECT_EQ(trust.admit(relay.public_key(), origin.public_key()).standing, OriginTrust::Standing::waiting);
  EXPECT_FALSE(trust.trusts(origin.public_key()));
  EXPECT_EQ(trust.admit(origin.public_key(), origin.public_key()).standing, OriginTrust::Standing::trusted);
  EXPECT_EQ(trust.admit(relay.public_key(), origin.public_key()).standing, OriginTrust::Standing::trusted);
  ASSERT_EQ(trust.learned().size(), 1u);
  // A relay naming itself as the origin is an origin session of its own key: only a pin refuses it.
  EXPECT_EQ(trust.admit(relay.public_key(), relay.public_key()).standing, OriginTrust::Standing::trusted);
}

TEST(OriginTrust, APinnedKeyAdmitsNoOtherOriginAndSaysWhichItExpected) {
  const auto origin = proto::Ed25519Identity::generate(), other = proto::Ed25519Identity::generate();
  OriginTrust trust(origin.public_key());
  EXPECT_EQ(trust.admit(other.public_key(), origin.public_key()).standing, OriginTrust::Standing::trusted);
  const auto v = trust.admit(other.public_key(), other.public_key());
  EXPECT_EQ(v.standing, OriginTrust::Standing::refused);
  EXPECT_EQ(v.why.find("origin key mismatch: expected "), 0u);
  EXPECT_NE(v.why.find(proto::to_hex(origin.public_key())), std::string::npos);
  EXPECT_NE(v.why.find(proto::to_hex(other.public_key())), std::string::npos);
  EXPECT_TRUE(trust.learned().empty());
}

// The attack of issue 20: a relay sends the whole table at once, segments 40-63 its own, before the
// origin's batches. Its seal is not the origin's: nothing it sent is taken, and the origin's batches
// that follow are.
TEST(SealedSegments, ForgedDescriptorsArrivingFirstChangeNothing) {
  const auto origin = proto::Ed25519Identity::generate(), relay = proto::Ed25519Identity::generate();
  const auto genuine = media(64 * 512, 1);
  auto altered = genuine;
  for (std::size_t i = 40 * 512; i < altered.size(); ++i) altered[i] ^= 0x41;
  const StreamSource real(1, genuine), fake(2, altered);
  const auto m = certified(real.manifest(), origin);
  StreamReceiver r = receiver();
  ASSERT_EQ(r.adopt(m), "");
  // Sealed by the relay's key, or by nobody the peer trusts, the fake table is refused whole.
  EXPECT_EQ(r.on_sealed_segments(batch(fake, m, relay, 0, 64), origin.public_key()), StreamReceiver::Sealed::forged);
  auto spliced = batch(real, m, origin, 0, 64);
  spliced.descriptors = batch(fake, m, origin, 0, 64).descriptors;  // the origin's seal on other descriptors
  EXPECT_EQ(r.on_sealed_segments(spliced, origin.public_key()), StreamReceiver::Sealed::forged);
  EXPECT_EQ(r.known(), 0u);
  EXPECT_EQ(r.on_sealed_segments(batch(real, m, origin, 0, 30), origin.public_key()), StreamReceiver::Sealed::accepted);
  EXPECT_EQ(r.on_sealed_segments(batch(fake, m, relay, 30, 64), origin.public_key()), StreamReceiver::Sealed::forged);
  EXPECT_EQ(r.on_sealed_segments(batch(real, m, origin, 40, 64), origin.public_key()), StreamReceiver::Sealed::ahead);
  EXPECT_EQ(r.on_sealed_segments(batch(real, m, origin, 20, 64), origin.public_key()),
            StreamReceiver::Sealed::accepted);
  EXPECT_EQ(r.known(), 64u);
  EXPECT_TRUE(r.final_seen());
  for (std::uint32_t s = 0; s < 64; ++s) EXPECT_EQ(r.descriptor(s), real.segments().descriptors[s]);
}

TEST(SealedSegments, TheFinalFlagIsTheOriginsToGive) {
  const auto origin = proto::Ed25519Identity::generate(), relay = proto::Ed25519Identity::generate();
  const StreamSource real(1, media(64 * 512, 2));
  const auto m = certified(real.manifest(), origin);
  StreamReceiver r = receiver();
  ASSERT_EQ(r.adopt(m), "");
  ASSERT_EQ(r.on_sealed_segments(batch(real, m, origin, 0, 40), origin.public_key()), StreamReceiver::Sealed::accepted);
  // A relay cutting the stream short: the table "ends" at 40, flagged final under the non-final seal.
  auto cut = batch(real, m, origin, 40, 40);
  cut.stream_flags = proto::stream_flags::final;
  cut.segment_count = 40;
  EXPECT_EQ(r.on_sealed_segments(cut, origin.public_key()), StreamReceiver::Sealed::forged);
  cut.seal = batch(real, m, relay, 40, 40).seal;
  EXPECT_EQ(r.on_sealed_segments(cut, origin.public_key()), StreamReceiver::Sealed::forged);
  EXPECT_FALSE(r.final_seen());
}

// A server's path probe is a batch without descriptors or final flag: it claims nothing, so it needs no
// seal and changes nothing; with the final flag the same empty batch is a claim and is checked.
TEST(SealedSegments, AnEmptyBatchClaimsNothingUnlessItIsFinal) {
  const auto origin = proto::Ed25519Identity::generate();
  const StreamSource real(1, media(64 * 512, 5));
  const auto m = certified(real.manifest(), origin);
  StreamReceiver r = receiver();
  ASSERT_EQ(r.adopt(m), "");
  ASSERT_EQ(r.on_sealed_segments(batch(real, m, origin, 0, 40), origin.public_key()), StreamReceiver::Sealed::accepted);
  proto::SegmentsBody probe;
  probe.first = probe.segment_count = 40;
  EXPECT_EQ(r.on_sealed_segments(probe, origin.public_key()), StreamReceiver::Sealed::accepted);
  EXPECT_EQ(r.known(), 40u);
  probe.stream_flags = proto::stream_flags::final;
  EXPECT_EQ(r.on_sealed_segments(probe, origin.public_key()), StreamReceiver::Sealed::forged);
  EXPECT_FALSE(r.final_seen());
}

TEST(SealedSegments, TwoOriginsThatDisagreeContradictAndARelayForwardsItsOriginsSeals) {
  const auto a = proto::Ed25519Identity::generate(), b = proto::Ed25519Identity::generate();
  const StreamSource real(1, media(64 * 512, 3)), other(2, media(64 * 512, 4));
  const auto ma = certified(real.manifest(), a), mb = certified(other.manifest(), b);
  StreamReceiver r = receiver();
  ASSERT_EQ(r.adopt(ma), "");
  ASSERT_EQ(r.on_sealed_segments(batch(real, ma, a, 0, 30), a.public_key()), StreamReceiver::Sealed::accepted);
  EXPECT_EQ(r.on_sealed_segments(batch(other, mb, b, 0, 30), b.public_key()), StreamReceiver::Sealed::contradicts);
  ASSERT_EQ(r.on_sealed_segments(batch(real, ma, a, 30, 64), a.public_key()), StreamReceiver::Sealed::accepted);
  // What a relay of this peer forwards: the certificate and the seals at the batches' ends, as received.
  const SealedTable& t = r.table();
  EXPECT_EQ(t.certificate().first, a.public_key());
  EXPECT_EQ(t.certificate().second, ma.certificate);
  EXPECT_EQ(t.sealed_end(0, 29), 0u);
  EXPECT_EQ(t.sealed_end(0, 50), 30u);
  EXPECT_EQ(t.sealed_end(30, 64), 64u);
  ASSERT_TRUE(t.seal(64, true));
  EXPECT_EQ(*t.seal(64, true), batch(real, ma, a, 30, 64).seal);
  EXPECT_FALSE(t.seal(64, false));
}

}  // namespace
}  // namespace ncast::peer
