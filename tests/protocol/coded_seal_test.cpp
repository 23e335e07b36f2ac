#include "protocol/coded_seal.hpp"

#include <gtest/gtest.h>

#include <random>

#include "protocol/replay_window.hpp"
#include "test_util.hpp"

namespace ncast::proto {
namespace {

constexpr std::size_t kN = 16, kL = 64;

struct Fixture {
  explicit Fixture(Suite suite = Suite::aes128_gcm) : key(StreamKey::generate(suite)) {
    std::mt19937_64 rng(7);
    mac_key_a[0] = 1;
    mac_key_b[0] = 2;
    plain_body.resize(kCodedHeaderSize + kN + kL);
    Writer w(plain_body);
    write_coded_header(w, {3, WireKind::recoded, kDenseWire, 77});
    const auto rest = testing::random_bytes_of(kN + kL, rng);
    w.bytes(rest);
  }

  StreamKey key;
  Aead sealer = stream_aead(key, Aead::Direction::seal);
  std::array<std::uint8_t, 16> mac_key_a{}, mac_key_b{};
  std::vector<std::uint8_t> plain_body;  // coded header, coefficients, payload

  // A shared part sealed once, as a server's stream does.
  std::vector<std::uint8_t> shared() {
    std::vector<std::uint8_t> s(plain_body);
    s.resize(s.size() + kTagSize);
    seal_shared(sealer, s);
    return s;
  }

  std::vector<std::uint8_t> packet(const std::vector<std::uint8_t>& shared, const Cmac& mac, std::uint64_t session,
                                   std::uint64_t number) {
    std::vector<std::uint8_t> out(2048);
    out.resize(write_coded_packet(out, coded_envelope(mac, session, number, sha256(shared)), shared));
    return out;
  }
};

// The whole receive path of a peer: authenticator, replay window, then the stream key.
std::optional<std::vector<std::uint8_t>> receive(std::vector<std::uint8_t> d, const Cmac& mac, ReplayWindow& replay,
                                                 const StreamKey& key) {
  auto header = parse_header(d);
  if (!header || header->type != PacketType::coded || !coded_authentic(d, mac) || !replay.check(header->number))
    return std::nullopt;
  auto opener = stream_aead(key, Aead::Direction::open);
  auto shared = coded_shared_part(d);
  if (!shared) return std::nullopt;
  auto body = open_shared(opener, *shared);
  if (!body) return std::nullopt;
  replay.accept(header->number);
  return std::vector<std::uint8_t>(body->begin(), body->end());
}

TEST(CodedSeal, RoundTripAndLayout) {
  Fixture f;
  const Cmac mac(f.mac_key_a);
  const auto shared = f.shared();
  EXPECT_EQ(shared.size(), kCodedHeaderSize + kN + kL + kTagSize);
  // The coded header stays in clear; the rest is not the plaintext.
  EXPECT_TRUE(std::equal(f.plain_body.begin(), f.plain_body.begin() + kCodedHeaderSize, shared.begin()));
  EXPECT_FALSE(
      std::equal(f.plain_body.begin() + kCodedHeaderSize, f.plain_body.end(), shared.begin() + kCodedHeaderSize));
  const auto d = f.packet(shared, mac, 42, 9);
  EXPECT_EQ(d.size(), coded_packet_size(kN, kL));
  ReplayWindow replay;
  const auto body = receive(d, mac, replay, f.key);
  ASSERT_TRUE(body);
  EXPECT_EQ(*body, f.plain_body);
  auto view = decode_coded_body(*body, kN, kL);
  ASSERT_TRUE(view);
  EXPECT_EQ(view->header.index, 77U);
  EXPECT_FALSE(receive(d, mac, replay, f.key)) << "a replay";
}

TEST(CodedSeal, SharedPartIsSealedOnceForEverySession) {
  Fixture f;
  const Cmac a(f.mac_key_a), b(f.mac_key_b);
  const auto shared = f.shared();
  const auto to_a = f.packet(shared, a, 1, 5), to_b = f.packet(shared, b, 2, 5);
  ReplayWindow ra, rb;
  EXPECT_TRUE(receive(to_a, a, ra, f.key));
  EXPECT_TRUE(receive(to_b, b, rb, f.key));
  // Session b's packet is no packet of session a's, even rewritten to a's session id.
  auto moved = to_b;
  Writer w(moved);
  write_header(w, {PacketType::coded, 1, 6});
  ReplayWindow fresh;
  EXPECT_FALSE(receive(moved, a, fresh, f.key));
}

TEST(CodedSeal, EveryOctetIsCovered) {
  Fixture f;
  const Cmac mac(f.mac_key_a);
  const auto d = f.packet(f.shared(), mac, 42, 9);
  // Header (prefix, session, number), coded header, ciphertext, stream tag, authenticator: any flipped bit fails.
  for (std::size_t i = 0; i < d.size(); ++i) {
    auto bad = d;
    bad[i] ^= 0x10;
    ReplayWindow replay;
    EXPECT_FALSE(receive(bad, mac, replay, f.key)) << "octet " << i;
  }
  auto shorter = d;
  shorter.pop_back();
  ReplayWindow replay;
  EXPECT_FALSE(receive(shorter, mac, replay, f.key));
  EXPECT_FALSE(coded_authentic(std::span(d).first(kHeaderSize + kMinSharedSize + kAuthenticatorSize - 1), mac));
}

// A subscriber knows the stream key: it can seal any shared part it likes. Without the session's MAC key it
// cannot make the authenticator of a shared part the server did not send, not even one with the stream tag
// of a genuine packet.
TEST(CodedSeal, SubscriberCannotForgeTowardAnother) {
  Fixture f;
  const Cmac victim(f.mac_key_a), attacker(f.mac_key_b);
  const auto genuine = f.packet(f.shared(), victim, 1, 5);
  // Its own shared part under the stream key, with its own authenticator (the wrong MAC key).
  auto forged_shared = f.shared();
  forged_shared[kCodedHeaderSize] ^= 1;  // stands for any content the attacker sealed itself
  seal_shared(f.sealer, std::span(forged_shared).first(forged_shared.size()));
  ReplayWindow replay;
  EXPECT_FALSE(receive(f.packet(forged_shared, attacker, 1, 6), victim, replay, f.key));
  // Its shared part spliced under the genuine header and authenticator.
  auto spliced = f.packet(forged_shared, victim, 1, 5);
  std::copy(genuine.end() - kAuthenticatorSize, genuine.end(), spliced.end() - kAuthenticatorSize);
  EXPECT_NE(spliced, genuine);
  ReplayWindow replay2;
  EXPECT_FALSE(receive(spliced, victim, replay2, f.key));
}

TEST(CodedSeal, AnotherStreamKeyDoesNotOpen) {
  Fixture f;
  const Cmac mac(f.mac_key_a);
  const auto d = f.packet(f.shared(), mac, 42, 9);
  ReplayWindow replay;
  EXPECT_FALSE(receive(d, mac, replay, StreamKey::generate(Suite::aes128_gcm)));
  EXPECT_TRUE(receive(d, mac, replay, f.key)) << "a failed open leaves the number unused";
}

TEST(CodedSeal, Chacha20StreamKey) {
  Fixture f(Suite::chacha20_poly1305);
  const Cmac mac(f.mac_key_a);
  ReplayWindow replay;
  const auto body = receive(f.packet(f.shared(), mac, 1, 1), mac, replay, f.key);
  ASSERT_TRUE(body);
  EXPECT_EQ(*body, f.plain_body);
}

TEST(CodedSeal, DoesNotFitOut) {
  Fixture f;
  const Cmac mac(f.mac_key_a);
  const auto shared = f.shared();
  std::vector<std::uint8_t> out(coded_packet_size(kN, kL) - 1);
  EXPECT_EQ(write_coded_packet(out, coded_envelope(mac, 1, 1, sha256(shared)), shared), 0U);
}

}  // namespace
}  // namespace ncast::proto
