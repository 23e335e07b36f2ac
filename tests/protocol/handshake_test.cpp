// The whole handshake between the two halves in memory: both sides derive the same keys, packets
// sealed by one open at the other in each direction, and any change to the JOIN or MANIFEST, a
// wrong pinned identity or someone else's nonce makes the peer refuse.
#include "protocol/handshake.hpp"

#include <gtest/gtest.h>

#include <random>

#include "protocol/replay_window.hpp"
#include "protocol/token.hpp"

namespace ncast::proto {
namespace {

ManifestBody sample_body() {
  ManifestBody b;
  b.server_id = 1;
  b.stream_id = 2;
  b.name = "movie";
  b.n = 128;
  b.symbol_size = 1024;
  b.segment_count = 3;
  b.window = 8;
  b.stream_key.assign(16, 0x5A);
  return b;
}

struct Handshake {
  explicit Handshake(std::vector<std::uint8_t> suites = {1, 2}) {
    Join wanted;
    wanted.stream = "movie";
    wanted.suites = std::move(suites);
    peer.emplace(wanted);
    const auto peer_addr = net::Address::parse("127.0.0.1:5555");
    // HELLO → RETRY with a real token → JOIN.
    auto hello = decode_hello(peer->hello());
    EXPECT_TRUE(hello);
    Retry retry{hello->nonce, {}};
    const auto token = minter.mint(peer_addr, hello->nonce, 100);
    retry.token.assign(token.begin(), token.end());
    join_datagram = *peer->on_retry(retry);
    auto join = decode_join(join_datagram);
    EXPECT_TRUE(join);
    EXPECT_TRUE(minter.verify(join->token, peer_addr, join->nonce, 101));
    suite = *choose_suite(join->suites);
    accept = server_accept(join_datagram, *join, identity, suite, 0x1234, sample_body());
    EXPECT_TRUE(accept);
  }
  TokenMinter minter{30};
  Ed25519Identity identity = Ed25519Identity::generate();
  std::optional<PeerHandshake> peer;
  std::vector<std::uint8_t> join_datagram;
  Suite suite = Suite::aes128_gcm;
  std::optional<ServerAccept> accept;
};

TEST(Handshake, BothSidesAgreeAndTrafficFlowsBothWays) {
  for (auto suites : {std::vector<std::uint8_t>{1}, std::vector<std::uint8_t>{2, 1}, std::vector<std::uint8_t>{9, 2}}) {
    Handshake hs(suites);
    auto manifest = hs.accept->manifest;
    auto accepted = hs.peer->on_manifest(manifest, hs.identity.public_key());
    ASSERT_TRUE(accepted) << to_string(accepted.error());
    EXPECT_EQ(static_cast<int>(accepted->keys.suite), static_cast<int>(suites[0] == 9 ? 2 : suites[0]));
    EXPECT_EQ(accepted->keys.server_key, hs.accept->keys.server_key);
    EXPECT_EQ(accepted->keys.peer_key, hs.accept->keys.peer_key);
    EXPECT_EQ(accepted->keys.server_iv, hs.accept->keys.server_iv);
    EXPECT_NE(accepted->keys.server_key, accepted->keys.peer_key);
    EXPECT_EQ(accepted->header.session, 0x1234u);
    EXPECT_EQ(accepted->body.name, "movie");
    EXPECT_EQ(accepted->body.n, 128);

    const auto& k = hs.accept->keys;
    Aead server_seal(k.suite, k.server_key, k.server_iv, Aead::Direction::seal);
    Aead peer_open(k.suite, accepted->keys.server_key, accepted->keys.server_iv, Aead::Direction::open);
    Aead peer_seal(k.suite, accepted->keys.peer_key, accepted->keys.peer_iv, Aead::Direction::seal);
    Aead server_open(k.suite, k.peer_key, k.peer_iv, Aead::Direction::open);
    std::vector<std::uint8_t> pkt(1200);
    AckBody ack;
    ack.known = 3;
    pkt.resize(seal_packet(pkt, {PacketType::ack, 0x1234, 0}, peer_seal, [&](Writer& w) { write_body(w, ack); }));
    auto h = parse_header(pkt);
    ASSERT_TRUE(h);
    auto body = open_packet(pkt, *h, server_open);
    ASSERT_TRUE(body);
    EXPECT_EQ(decode_ack_body(*body)->known, 3u);
    // A packet sealed in one direction never opens as the other direction.
    std::vector<std::uint8_t> down(1200);
    down.resize(
        seal_packet(down, {PacketType::bye, 0x1234, 1}, server_seal, [](Writer& w) { write_body(w, ByeBody{}); }));
    auto copy = down;
    EXPECT_TRUE(open_packet(copy, *parse_header(copy), peer_open));
    EXPECT_FALSE(open_packet(down, *parse_header(down), server_open));
  }
}

TEST(Handshake, ThePeersJoinIsFullSizeSoItsSessionMayAnswerWithDescriptors) {
  // A server sends at most 3x what a session received before its first ACK: a full-size JOIN
  // leaves room for the MANIFEST and the segment descriptors in that budget.
  Handshake hs;
  EXPECT_EQ(hs.join_datagram.size(), kMaxClearSize);
  EXPECT_GT(3 * hs.join_datagram.size(), hs.accept->manifest.size() + kMinDatagram);
}

TEST(Handshake, UnpinnedPeerAcceptsAnyIdentityPinnedPeerOnlyItsOwn) {
  Handshake hs;
  auto m1 = hs.accept->manifest;
  EXPECT_TRUE(hs.peer->on_manifest(m1, std::nullopt));
  auto m2 = hs.accept->manifest;
  EXPECT_EQ(hs.peer->on_manifest(m2, Ed25519Identity::generate().public_key()).error(), DropReason::auth);
}

TEST(Handshake, EveryAlteredManifestOctetIsRefused) {
  Handshake hs;
  const auto& m = hs.accept->manifest;
  for (std::size_t i = 0; i < m.size(); ++i) {
    auto bad = m;
    bad[i] ^= 0x01;
    EXPECT_FALSE(hs.peer->on_manifest(bad, std::nullopt)) << "octet " << i;
  }
  for (std::size_t len = 0; len < m.size(); ++len) {
    std::vector<std::uint8_t> cut(m.begin(), m.begin() + static_cast<long>(len));
    EXPECT_FALSE(hs.peer->on_manifest(cut, std::nullopt)) << "length " << len;
  }
}

TEST(Handshake, ManInTheMiddleRewritingJoinIsDetected) {
  Handshake hs;
  // An attacker swaps the peer's public key in the JOIN for its own; the server answers that JOIN.
  auto join = *decode_join(hs.join_datagram);
  X25519KeyPair attacker;
  join.peer_public = attacker.public_key();
  const auto forged_join = encode(join);
  auto forged = server_accept(forged_join, join, hs.identity, Suite::aes128_gcm, 9, sample_body());
  ASSERT_TRUE(forged);
  // The signature covers the JOIN the peer did not send: a pinned (or unpinned) peer refuses.
  EXPECT_EQ(hs.peer->on_manifest(forged->manifest, hs.identity.public_key()).error(), DropReason::auth);
}

TEST(Handshake, ManifestForAnotherHandshakeIsUnexpected) {
  Handshake a, b;
  auto m = b.accept->manifest;
  EXPECT_EQ(a.peer->on_manifest(m, std::nullopt).error(), DropReason::unexpected);
  Join j;
  j.stream = "x";
  PeerHandshake fresh(j);
  auto m2 = a.accept->manifest;
  EXPECT_EQ(fresh.on_manifest(m2, std::nullopt).error(), DropReason::unexpected);  // no JOIN sent yet
  Retry other;
  other.token = {1};
  EXPECT_FALSE(fresh.on_retry(other));  // not our nonce
}

// The RETRY answering a retransmitted HELLO can carry another token (minted in a later second) and
// arrive after the server made its session from the first JOIN: the peer then sends a second JOIN,
// but the MANIFEST (and every resent copy) is signed over the first. Both must verify, with the keys
// of the JOIN each was made from.
TEST(Handshake, AManifestForAnEarlierJoinVerifiesAfterALaterRetry) {
  Handshake hs;
  const auto peer_addr = net::Address::parse("127.0.0.1:5555");
  Retry later{hs.peer->nonce(), {}};
  const auto token = hs.minter.mint(peer_addr, hs.peer->nonce(), 101);
  later.token.assign(token.begin(), token.end());
  const auto second = *hs.peer->on_retry(later);
  ASSERT_NE(second, hs.join_datagram);
  EXPECT_EQ(*hs.peer->on_retry(later), second) << "the same RETRY again: the same JOIN";
  EXPECT_EQ(hs.peer->join_datagram(), second);

  auto first_manifest = hs.accept->manifest;
  auto accepted = hs.peer->on_manifest(first_manifest, hs.identity.public_key());
  ASSERT_TRUE(accepted) << to_string(accepted.error());
  EXPECT_EQ(accepted->keys.peer_key, hs.accept->keys.peer_key);
  EXPECT_EQ(accepted->keys.server_key, hs.accept->keys.server_key);

  auto join = *decode_join(second);
  auto from_second = server_accept(second, join, hs.identity, hs.suite, 0x99, sample_body());
  ASSERT_TRUE(from_second);
  auto second_manifest = from_second->manifest;
  accepted = hs.peer->on_manifest(second_manifest, hs.identity.public_key());
  ASSERT_TRUE(accepted) << to_string(accepted.error());
  EXPECT_EQ(accepted->keys.peer_key, from_second->keys.peer_key);
  EXPECT_NE(from_second->keys.peer_key, hs.accept->keys.peer_key);
}

TEST(Handshake, LowOrderPeerKeyGetsNoSession) {
  Handshake hs;
  auto join = *decode_join(hs.join_datagram);
  join.peer_public = PublicKey{};
  EXPECT_FALSE(server_accept(encode(join), join, hs.identity, Suite::aes128_gcm, 1, sample_body()));
}

TEST(Handshake, NoCommonSuite) {
  const std::vector<std::uint8_t> none{7, 8};
  EXPECT_FALSE(choose_suite(none));
}

TEST(Handshake, KeyScheduleMatchesItsDefinition) {
  // derive_session_keys computed independently from the primitives (section 4).
  std::mt19937_64 rng(3);
  std::vector<std::uint8_t> shared(32), join(80), aad(kManifestAadSize);
  for (auto* v : {&shared, &join, &aad})
    for (auto& b : *v) b = static_cast<std::uint8_t>(rng());
  Nonce n1{}, n2{};
  for (auto& b : n1) b = static_cast<std::uint8_t>(rng());
  for (auto& b : n2) b = static_cast<std::uint8_t>(rng());
  const auto keys = derive_session_keys(Suite::chacha20_poly1305, shared, n1, n2, join, aad);
  std::vector<std::uint8_t> transcript(join);
  transcript.insert(transcript.end(), aad.begin(), aad.end());
  const auto th = sha256(transcript);
  std::vector<std::uint8_t> salt(n1.begin(), n1.end());
  salt.insert(salt.end(), n2.begin(), n2.end());
  const std::string label = "ncast keys v2";
  std::vector<std::uint8_t> info(label.begin(), label.end());
  info.insert(info.end(), th.begin(), th.end());
  // HKDF by hand: PRK = HMAC(salt, IKM); T(i) = HMAC(PRK, T(i-1) || info || i).
  const auto prk = hmac_sha256(salt, shared);
  std::vector<std::uint8_t> okm, t;
  for (std::uint8_t i = 1; okm.size() < 2 * (32 + 12) + 16; ++i) {
    std::vector<std::uint8_t> in(t);
    in.insert(in.end(), info.begin(), info.end());
    in.push_back(i);
    const auto block = hmac_sha256(prk, in);
    t.assign(block.begin(), block.end());
    okm.insert(okm.end(), t.begin(), t.end());
  }
  EXPECT_EQ(to_hex(keys.server_key), to_hex(std::span(okm).first(32)));
  EXPECT_EQ(to_hex(keys.server_iv), to_hex(std::span(okm).subspan(32, 12)));
  EXPECT_EQ(to_hex(keys.peer_key), to_hex(std::span(okm).subspan(44, 32)));
  EXPECT_EQ(to_hex(keys.peer_iv), to_hex(std::span(okm).subspan(76, 12)));
  EXPECT_EQ(to_hex(keys.coded_mac), to_hex(std::span(okm).subspan(88, 16)));
}

}  // namespace
}  // namespace ncast::proto
