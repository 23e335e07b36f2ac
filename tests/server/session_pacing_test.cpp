// A session's pacing against a simulated peer: it follows the rate, measures the loss, holds a burst in
// its bucket, sends in a row no more than its peer surely still needs and never asks to come back at once; kept on a
// shared path, it forgets the queue's loss and sends one datagram at a time while congested lately; and it knows how
// far its peer's player is from a stall.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

#include "tests/server/session_sim.hpp"

namespace ncast::server {
namespace {

using namespace std::chrono_literals;
using namespace session_sim;

TEST(Session, PacingFollowsTheRate) {
  Fixture f(40);
  f.config.rate = 120000;  // octets/s: about 100 packets of 1.2 kB per second
  Session s(7, net::Address::parse("127.0.0.1:1"), {}, *f.stream, f.keys, f.config, {}, f.observer, TimePoint{} + 1s);
  SimPeer peer(f.keys, 7, f.info, 4, f.shared->key());
  const std::size_t bytes = exchange(f, s, peer, 0.0, 1000);  // one second
  EXPECT_FALSE(peer.complete(40));                            // it would take longer at this rate
  EXPECT_GT(bytes, 110000u);
  EXPECT_LT(bytes, 130000u);
}

TEST(Session, PacedSessionMeasuresLossFromAPeerThatAcksEveryPacket) {
  // About one packet per millisecond and an ACK at the end of every millisecond: no single ACK interval
  // spans 8 packets, so the loss must be measured across ACKs. Then the paced rate makes up for it.
  Fixture f(2000);
  f.config.rate = 120000;  // octets/s: about 1070 coded packets of 112 octets per second
  Session s(7, net::Address::parse("127.0.0.1:1"), {}, *f.stream, f.keys, f.config, {}, f.observer, TimePoint{} + 1s);
  SimPeer peer(f.keys, 7, f.info, 4, f.shared->key());
  const std::size_t bytes = exchange(f, s, peer, 0.3, 3000);  // three seconds
  EXPECT_NEAR(s.loss_estimate(), 0.3, 0.08);
  EXPECT_GT(static_cast<double>(bytes), 1.2 * 3 * 120000);
}

TEST(Session, TheBucketHoldsAPacingBurst) {
  // The server wakes a paced session when a whole burst may go (one GSO message): the bucket must be
  // able to hold one, and no more than one beyond a few milliseconds' worth, however long it idled.
  Fixture f(4);
  f.config.rate = 120000;  // octets/s: 4 ms of it is under one datagram
  f.config.max_datagram = 1200;
  for (const std::uint16_t burst : {1, 8}) {
    f.config.burst = burst;
    TimePoint t = TimePoint{} + 1s;
    Session s(7, net::Address::parse("127.0.0.1:1"), {}, *f.stream, f.keys, f.config, {}, f.observer, t);
    const std::size_t held = std::max<std::size_t>(2, burst) * 1200;
    EXPECT_EQ(s.burst_bytes(), burst * 1200u);
    EXPECT_TRUE(s.can_send(held)) << "a new session may send a burst at once";
    s.spend(held);
    EXPECT_FALSE(s.can_send(1));
    // The next burst is due after burst / rate.
    const auto wait = std::chrono::duration<double>(s.pacing_ready(s.burst_bytes(), t) - t).count();
    EXPECT_NEAR(wait, burst * 1200.0 / 120000, 1e-4) << "burst " << burst;
    t += 10s;
    s.refill(t);
    EXPECT_TRUE(s.can_send(held)) << "burst " << burst;
    EXPECT_FALSE(s.can_send(held + 1)) << "burst " << burst;
  }
}

TEST(Session, APacedSessionSendsInARowNoMoreThanItsPeerSurelyStillNeeds) {
  // Turns as the server takes them: at most a burst, and no more than in_a_row() says; a lossless peer
  // acknowledges each turn. Every round then ends in a burst exactly at full rank: nothing is sent past
  // it, and no turn is cut short but a segment's last (one by one, the last two bursts' worth of each
  // round took eight turns of one). A download session is never held so.
  Fixture f(4);
  f.config.burst = 4;
  for (const bool download : {false, true}) {
    f.config.download = download;
    const TimePoint t = TimePoint{} + 1s;
    Session s(7, net::Address::parse("127.0.0.1:1"), {}, *f.stream, f.keys, f.config, {}, f.observer, t);
    SimPeer peer(f.keys, 7, f.info, f.config.window, f.shared->key());
    auto ack = [&] {
      auto a = peer.ack();
      ASSERT_FALSE(s.receive(a, *proto::parse_header(a), t).drop);
    };
    ack();
    if (download) {
      EXPECT_EQ(s.in_a_row(), std::numeric_limits<std::size_t>::max());
      continue;
    }
    std::vector<std::uint8_t> buf(proto::kMinDatagram);
    std::size_t coded = 0, short_turns = 0;
    for (int turn = 0; turn < 400 && !peer.complete(4); ++turn) {
      const std::size_t allowed = std::min<std::size_t>(s.in_a_row(), f.config.burst);
      std::size_t coded_in_turn = 0;
      for (std::size_t i = 0; i < allowed; ++i) {
        const std::size_t len = s.next_packet(buf, t);
        if (len == 0) break;
        if (proto::parse_header({buf.data(), len})->type == proto::PacketType::coded) ++coded_in_turn;
        peer.deliver({buf.begin(), buf.begin() + static_cast<long>(len)});
      }
      coded += coded_in_turn;
      if (coded_in_turn > 0 && coded_in_turn < f.config.burst) ++short_turns;
      ack();
    }
    ASSERT_TRUE(peer.complete(4));
    EXPECT_EQ(peer.coded_after_full_rank(), 0u);
    std::size_t needed = 0;
    for (std::uint32_t seg = 0; seg < 4; ++seg) needed += f.stream->symbols_of(seg);
    EXPECT_EQ(coded, needed) << "every CODED packet was needed";
    EXPECT_LE(short_turns, 4u) << "at most each segment's last turn is short";
  }
}

TEST(Session, PacingNeverAsksToComeBackAtOnce) {
  // Fractional token counts just short of a packet must give a wake-up in the future: a wait that
  // truncated to zero made the scheduler spin (seen on a 16-core host).
  Fixture f(2);
  f.config.rate = 1e9 / 3;
  Session s(7, net::Address::parse("127.0.0.1:1"), {}, *f.stream, f.keys, f.config, {}, f.observer, TimePoint{});
  TimePoint t{};
  for (int i = 0; i < 100000; ++i) {
    t += std::chrono::nanoseconds(1 + i % 7);
    s.refill(t);
    while (s.can_send(1200)) s.spend(1200);
    ASSERT_GT(s.pacing_ready(1200, t), t) << "at step " << i;
  }
}

TEST(Session, KeptOnItsSharedPathItForgetsTheQueuesLossButLearnsRandomLossAgain) {
  // 40 % loss, measured and made up for; then the newer sessions of its path are ended (the loss was
  // their queue's): it sends at its rate at once, and measures the loss afresh from there.
  Fixture f(4000);
  f.config.rate = 120000;
  Session s(7, net::Address::parse("127.0.0.1:1"), {}, *f.stream, f.keys, f.config, {}, f.observer, TimePoint{} + 1s);
  SimPeer peer(f.keys, 7, f.info, 4, f.shared->key());
  exchange(f, s, peer, 0.4, 3000);
  ASSERT_NEAR(s.loss_estimate(), 0.4, 0.08);
  ASSERT_GT(s.rate(), 1.4 * 120000);
  s.kept_on_shared_path();
  EXPECT_EQ(s.loss_estimate(), 0.0);
  EXPECT_DOUBLE_EQ(s.rate(), 120000);
  // Loss that stays is the path's own, made up for again.
  exchange(f, s, peer, 0.4, 3000, TimePoint{} + 4s + 1ms);
  EXPECT_NEAR(s.loss_estimate(), 0.4, 0.08);
}

TEST(Session, CongestedLatelyItSendsOneDatagramAtATimeAlsoWhenKeptOnItsPath) {
  // A path that carries a quarter of the stream: the breaker finds it short and the session sends one
  // datagram at a time. Kept on its shared path, its breaker restarts (no longer backing off), but the
  // queue it shared may still be full beside an elastic flow: bursts wait until it has been calm.
  Fixture f(4000);
  f.config.media_rate = 110000;
  f.config.rate = 120000;
  f.config.burst = 8;
  f.config.max_datagram = 1200;
  Session s(7, net::Address::parse("127.0.0.1:1"), {}, *f.stream, f.keys, f.config, {}, f.observer, TimePoint{} + 1s);
  SimPeer peer(f.keys, 7, f.info, 4, f.shared->key());
  EXPECT_EQ(s.burst_bytes(), 8u * 1200);
  exchange(f, s, peer, 0.75, 3000);
  ASSERT_TRUE(s.breaker().congested());
  EXPECT_EQ(s.burst_bytes(), 1200u);
  s.kept_on_shared_path();
  EXPECT_FALSE(s.breaker().congested());
  EXPECT_TRUE(s.breaker().congested_lately());
  EXPECT_EQ(s.burst_bytes(), 1200u);
}

TEST(Session, PlayedAheadIsTheStreamDecodedBeyondAPlayerStartedAtTheFirstSegment) {
  // 24,576 bit/s: a whole segment of 64 symbols of 48 octets plays for one second.
  Fixture f(6, 0.05, 48, 24576);
  f.config.window = 1;  // segment by segment
  TimePoint t = TimePoint{} + 1s;
  Session s(7, net::Address::parse("127.0.0.1:1"), {}, *f.stream, f.keys, f.config, {}, f.observer, t);
  SimPeer peer(f.keys, 7, f.info, 1, f.shared->key());
  std::vector<std::uint8_t> buf(proto::kMinDatagram);
  auto ack = [&] {
    auto a = peer.ack();
    ASSERT_FALSE(s.receive(a, *proto::parse_header(a), t).drop);
  };
  // Sends until the peer has decoded `segments` in all; the ACK that says so comes at t.
  auto decode_up_to = [&](std::size_t segments) {
    ack();
    while (peer.data().size() < segments) {
      s.refill(t);
      const std::size_t len = s.next_packet(buf, t);
      ASSERT_GT(len, 0u);
      peer.deliver({buf.begin(), buf.begin() + static_cast<long>(len)});
      ack();
    }
  };
  EXPECT_FALSE(s.played_ahead(t));
  decode_up_to(1);
  EXPECT_NEAR(*s.played_ahead(t), 1.0, 1e-9);
  t += 400ms;
  EXPECT_NEAR(*s.played_ahead(t), 0.6, 1e-9);
  decode_up_to(3);
  EXPECT_NEAR(*s.played_ahead(t), 2.6, 1e-9);
  t += 3s;
  EXPECT_NEAR(*s.played_ahead(t), -0.4, 1e-9) << "a stall of 0.4 s, had the player started at once";
}

}  // namespace
}  // namespace ncast::server
