// The circuit breaker of many paced sessions at once, in simulated time: random loss that the sessions
// make up for never ends one, however busy their server, and a bottleneck that cannot carry them all
// ends many (the issue-16 cases: 10,000 realtime peers at 30 % random loss; 200 behind 50 Mbit/s).
#include <gtest/gtest.h>

#include <deque>

#include "peer/swarm/loss_model.hpp"
#include "tests/server/session_sim.hpp"

namespace ncast::server {
namespace {

using namespace std::chrono_literals;
using namespace session_sim;

struct SwarmConfig {
  std::size_t sessions = 40;
  double loss = 0;                    // random loss at each peer
  double burst = 1;                   // its mean burst length in datagrams (Gilbert–Elliott; 1: independent)
  double server_per_ms = 1e9;         // datagrams the server's thread sends per millisecond, all sessions
  int stall_every_ms = 0;             // the thread stalls this often (0: never), neither sending nor
  int stall_ms = 0;                   // reading ACKs for this long
  double link_per_ms = 1e9;           // datagrams the shared bottleneck forwards per millisecond
  std::size_t link_queue = 1u << 30;  // datagrams its queue holds (tail drop beyond)
  int seconds = 20;
  std::uint32_t segments = 24;  // of 64 datagrams: about 15 s of the stream
  int squeeze_at_s = 0;         // from then on (0: never) the bottleneck forwards squeezed_link_per_ms
  double squeezed_link_per_ms = 0;
};

struct SwarmResult {
  std::size_t ended = 0, complete = 0;
  std::vector<double> sent_per_session;  // each second: datagrams the sessions still open sent, per session
};

// Paced sessions of a 768 kbit/s-like stream (about 100 datagrams a second) joining over the first
// second; each peer acknowledges after 8 CODED packets, a decoded segment, or 20 ms.
class Swarm {
 public:
  explicit Swarm(const SwarmConfig& c) : c_(c), f_(c.segments, 0.05, 1024), m_(c.sessions) {
    f_.config.media_rate = 100 * 1088;  // a CODED packet of 1024-octet symbols is 1088 octets
    f_.config.rate = 1.08 * f_.config.media_rate;
    f_.config.burst = 8;
    f_.config.max_ack_delay_ms = 20;
  }

  SwarmResult run() {
    SwarmResult r;
    for (int ms = 0; ms < c_.seconds * 1000; ++ms, t_ += 1ms) {
      if (ms % 1000 == 0 && ms > 0) {
        std::size_t open = 0, sent = 0;
        for (Member& x : m_) {
          if (x.session && !x.ended) {
            ++open;
            sent += x.sent;
          }
          x.sent = 0;
        }
        r.sent_per_session.push_back(open ? static_cast<double>(sent) / static_cast<double>(open) : 0.0);
      }
      if (c_.squeeze_at_s > 0 && ms == c_.squeeze_at_s * 1000) c_.link_per_ms = c_.squeezed_link_per_ms;
      join(std::min(c_.sessions, static_cast<std::size_t>(ms) * c_.sessions / 1000 + 1));
      forward();
      for (Member& x : m_)
        if (x.session && !x.ended && x.unacked > 0 && ++x.since_ack_ms >= 20) ack(x);
      const bool stalled = c_.stall_every_ms > 0 && ms % c_.stall_every_ms < c_.stall_ms;
      if (!stalled) serve();
    }
    for (const Member& x : m_) {
      r.ended += x.ended ? 1 : 0;
      r.complete += x.peer->complete(f_.stream->segment_count()) ? 1 : 0;
    }
    return r;
  }

 private:
  struct Member {
    std::unique_ptr<Session> session;
    std::unique_ptr<SimPeer> peer;
    std::unique_ptr<swarm::LossProcess> loss;
    std::deque<std::vector<std::uint8_t>> acks;  // sent by the peer, not yet read by the server
    int unacked = 0, since_ack_ms = 0;
    std::size_t sent = 0;  // datagrams this second
    bool ended = false;
  };

  void ack(Member& x) {
    x.acks.push_back(x.peer->ack());
    x.unacked = 0;
    x.since_ack_ms = 0;
  }

  void join(std::size_t joined) {
    for (; joined_ < joined; ++joined_) {
      Member& x = m_[joined_];
      const std::uint64_t id = 1000 + joined_;
      x.session = std::make_unique<Session>(id, net::Address::parse("127.0.0.1:1"), proto::Nonce{}, *f_.stream, f_.keys,
                                            f_.config, std::vector<std::uint8_t>{}, f_.observer, t_);
      x.peer = std::make_unique<SimPeer>(f_.keys, id, f_.info, f_.config.window, f_.shared->key());
      const std::string spec = c_.burst > 1 ? "burst:" + std::to_string(c_.loss) + ":" + std::to_string(c_.burst)
                                            : "bernoulli:" + std::to_string(c_.loss);
      // The chain also moves while nothing crosses it, in 10 ms slots of simulated time, as ncast-swarm's
      // does (--loss-slot): stepped only per datagram, a burst met by a silent session's probes, one
      // every 2 s, lasted for tens of seconds, and one session in 10-40 runs never finished.
      x.loss = std::make_unique<swarm::LossProcess>(swarm::parse_loss(spec), id, 10ms);
      ack(x);
    }
  }

  // The bottleneck forwards, then random loss at the peer.
  void forward() {
    link_credit_ = std::min(link_credit_ + c_.link_per_ms, 64.0);
    for (; link_credit_ >= 1 && !queue_.empty(); link_credit_ -= 1) {
      auto [i, d] = std::move(queue_.front());
      queue_.pop_front();
      Member& x = m_[i];
      if (x.ended || x.loss->drop(t_)) continue;
      const auto decoded = x.peer->data().size();
      x.peer->deliver(std::move(d), true);  // the server may not have read the newest ACKs yet
      if (x.peer->data().size() != decoded || ++x.unacked == 8) ack(x);
    }
  }

  // The thread reads the ACKs, then serves the sessions in turn within its budget; what it cannot send
  // waits.
  void serve() {
    for (Member& x : m_)
      for (; !x.acks.empty(); x.acks.pop_front())
        (void)x.session->receive(x.acks.front(), *proto::parse_header(x.acks.front()), t_);
    server_credit_ = std::min(server_credit_ + c_.server_per_ms, 2 * c_.server_per_ms + 8);
    for (std::size_t k = 0; k < joined_ && server_credit_ >= 1; ++k) {
      const std::size_t i = (turn_ + k) % joined_;
      Member& x = m_[i];
      if (x.ended) continue;
      x.session->refill(t_);
      x.ended = x.session->path_too_slow();
      while (!x.ended && server_credit_ >= 1 && x.session->can_send(f_.config.max_datagram)) {
        const std::size_t len = x.session->next_packet(buf_, t_);
        if (len == 0) break;
        x.session->spend(len);
        server_credit_ -= 1;
        ++x.sent;
        if (queue_.size() < c_.link_queue)
          queue_.emplace_back(i, std::vector<std::uint8_t>(buf_.begin(), buf_.begin() + static_cast<long>(len)));
      }
    }
    turn_ = (turn_ + 1) % joined_;
  }

  SwarmConfig c_;
  Fixture f_;
  std::vector<Member> m_;
  std::size_t joined_ = 0, turn_ = 0;
  std::deque<std::pair<std::size_t, std::vector<std::uint8_t>>> queue_;  // the bottleneck's
  std::vector<std::uint8_t> buf_ = std::vector<std::uint8_t>(proto::kMinDatagram);
  double server_credit_ = 0, link_credit_ = 0;
  TimePoint t_ = TimePoint{} + 1s;
};

// Random loss of 30 % and 45 %, a server that sends 15 % less than the sessions' pacing asks for once
// they make up for the loss, and stalls 100 ms a second (its ACKs read late): the path carries the
// stream at the loss-compensated rate, so no session may end. On the GPU host 758-795 of 10,000
// realtime peers at 30 % were ended so, in their first seconds, while their loss estimates converged.
TEST(SessionBreaker, RandomLossNeverEndsSessionsOfALaggingServer) {
  for (const double loss : {0.3, 0.45}) {
    SwarmConfig c;
    c.loss = loss;
    c.server_per_ms = 0.85 * static_cast<double>(c.sessions) * 0.108 / (1 - loss);
    c.stall_every_ms = 1000;
    c.stall_ms = 100;
    c.seconds = 25;
    const SwarmResult r = Swarm(c).run();
    EXPECT_EQ(r.ended, 0u) << "loss " << loss;
    EXPECT_EQ(r.complete, c.sessions) << "loss " << loss;
  }
}

// Random loss of 10 % in bursts of 5 datagrams on average (Gilbert–Elliott): at about 100 datagrams a
// second a second may lose a quarter and more, two in a row now and then, while the path carries the
// stream at the loss-compensated rate on average. On the GPU host 6 of 10,000 realtime peers at
// `--loss burst:0.1:5` were ended as "path too slow: measured 587-671 of 768 kbit/s".
TEST(SessionBreaker, BurstyRandomLossNeverEndsSessions) {
  SwarmConfig c;
  c.loss = 0.1;
  c.burst = 5;
  c.seconds = 60;
  c.segments = 64;  // about 43 s of the stream: time to complete for a session that backed off a while
  c.sessions = 100;
  const SwarmResult r = Swarm(c).run();
  EXPECT_EQ(r.ended, 0u);
  EXPECT_EQ(r.complete, c.sessions);
}

// A bottleneck that forwards 40 % of what the sessions need, without random loss: the loss is the
// queue's, making up for it only fills the queue, and most of the sessions must leave.
TEST(SessionBreaker, ABottleneckThatCannotCarryTheSessionsEndsMost) {
  SwarmConfig c;
  c.link_per_ms = 40 * 0.1 * 0.4;
  c.link_queue = 200;
  c.seconds = 12;
  const SwarmResult r = Swarm(c).run();
  EXPECT_GE(r.ended, c.sessions / 2);
  EXPECT_LT(r.ended, c.sessions);
}

// Sessions that carry the stream through 10 % random loss (made up for) until their bottleneck is
// squeezed to carry 40 % of them: the new loss is the queue's, and redundancy for it would only fill the
// queue further (RFC 8085). Those that stay keep sending what they sent before; most leave.
TEST(SessionBreaker, LossThatCameWithCongestionIsNotMadeUpFor) {
  SwarmConfig c;
  c.loss = 0.1;
  c.link_queue = 200;
  c.seconds = 16;
  c.squeeze_at_s = 8;
  c.squeezed_link_per_ms = static_cast<double>(c.sessions) * 0.1 * 0.4;
  const SwarmResult r = Swarm(c).run();
  ASSERT_GE(r.sent_per_session.size(), 15u);
  // Before: about 100 datagrams a second and the headroom, made up for 10 % loss.
  for (int s = 5; s < 8; ++s) {
    EXPECT_GT(r.sent_per_session[s], 115) << "second " << s;
    EXPECT_LT(r.sent_per_session[s], 130) << "second " << s;
  }
  // After: never more than before, though the queue loses most of it (made up for, up to twice as much).
  for (int s = 8; s < 15; ++s) EXPECT_LT(r.sent_per_session[s], 130) << "second " << s;
  EXPECT_GE(r.ended, c.sessions / 2);
  EXPECT_LT(r.ended, c.sessions);
}

}  // namespace
}  // namespace ncast::server
