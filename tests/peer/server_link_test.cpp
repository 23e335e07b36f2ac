// ServerLink's handshake on a path where the server answers every HELLO but no JOIN, as one does after
// closing a handshake whose JOINs it stopped hearing (it then drops them as replays); and next_poll(),
// before which a poll does nothing, over a session whose server falls silent.
#include "peer/server_link.hpp"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <vector>

#include "protocol/handshake.hpp"
#include "protocol/packets.hpp"
#include "protocol/segment_seal.hpp"

namespace ncast::peer {
namespace {

using namespace std::chrono_literals;

LinkOptions movie_options() {
  LinkOptions options;
  options.server = net::Address::parse("127.0.0.1:7000");
  options.stream = "movie";
  return options;
}

// A link to a server at 127.0.0.1:7000 for stream "movie", and what it sends.
struct LinkUnderTest {
  StreamReceiver receiver{{}, [](std::span<const std::uint8_t>) {}};
  ServerLink link{movie_options(), receiver};
  std::vector<std::vector<std::uint8_t>> sent;
  const ServerLink::Send send = [this](std::span<const std::uint8_t> d) { sent.emplace_back(d.begin(), d.end()); };
};

TEST(ServerLink, UnansweredJoinsStartOverWithANewNonceThenGiveUp) {
  LinkUnderTest t;
  auto& link = t.link;
  auto& sent = t.sent;
  const auto& send = t.send;

  struct Joins {
    int count = 0;
    TimePoint first{}, next_hello{};
  };
  std::map<proto::Nonce, Joins> joins;  // per nonce
  std::optional<proto::Nonce> last;
  int hellos = 0;
  std::size_t seen = 0;
  auto now = TimePoint{} + 1h;
  link.start(now, send);
  for (int tick = 0; tick < 2000 && link.state() != ServerLink::State::failed; ++tick) {
    for (; seen < sent.size(); ++seen) {
      auto& d = sent[seen];
      if (auto hello = proto::decode_hello(d)) {
        ++hellos;
        if (last) joins[*last].next_hello = now;
        auto retry = proto::encode(proto::Retry{hello->nonce, std::vector<std::uint8_t>(16, 7)});
        link.on_datagram(retry, now, send);
      } else if (auto join = proto::decode_join(d)) {
        Joins& j = joins[join->nonce];
        if (j.count++ == 0) j.first = now;
        last = join->nonce;
      }
    }
    now += 50ms;
    link.poll(now, send);
  }
  ASSERT_EQ(link.state(), ServerLink::State::failed);
  EXPECT_EQ(link.failure(), "the server does not complete the handshake");
  // Three fresh nonces after the first, each given up 4 s after its first JOIN (the server's handshake
  // timeout is 3 s), the last one tried its full twelve times.
  ASSERT_EQ(joins.size(), 4u);
  int full = 0;
  for (const auto& [nonce, j] : joins) {
    if (j.next_hello == TimePoint{}) {
      EXPECT_EQ(j.count, 12);
      ++full;
      continue;
    }
    EXPECT_GE(j.next_hello - j.first, 4s);
    EXPECT_LT(j.next_hello - j.first, 5s);
    EXPECT_LT(j.count, 12);
  }
  EXPECT_EQ(full, 1);
  EXPECT_EQ(hellos, 4);
  EXPECT_EQ(link.counters().handshakes, 4u);
}

TEST(ServerLink, APollBeforeNextPollDoesNothing) {
  LinkUnderTest t;
  auto& link = t.link;
  auto& sent = t.sent;
  const auto& send = t.send;
  const auto identity = proto::Ed25519Identity::generate();
  // The server's side of the handshake, in-process: a RETRY for the HELLO, a MANIFEST for the JOIN.
  auto now = TimePoint{} + 1h;
  link.start(now, send);
  auto hello = proto::decode_hello(sent.at(0));
  ASSERT_TRUE(hello);
  auto retry = proto::encode(proto::Retry{hello->nonce, std::vector<std::uint8_t>(16, 7)});
  link.on_datagram(retry, now, send);
  const auto join = proto::decode_join(sent.at(1));
  ASSERT_TRUE(join);
  proto::ManifestBody body;
  body.server_id = 1;
  body.stream_id = 2;
  body.name = "movie";
  body.n = 128;
  body.symbol_size = 1024;
  body.segment_count = 3;
  body.window = join->window;
  body.share = join->share;
  body.max_datagram = join->max_datagram;
  body.stream_key.assign(16, 0x5A);
  body.origin = identity.public_key();  // the server is the stream's origin
  body.certificate = proto::certify(identity, proto::stream_identity(body));
  auto accepted = proto::server_accept(sent.at(1), *join, identity, proto::Suite::aes128_gcm, 0x1234, body);
  ASSERT_TRUE(accepted);
  link.on_datagram(accepted->manifest, now, send);
  ASSERT_EQ(link.state(), ServerLink::State::established) << link.failure();

  // The server says nothing more, not even the segment table. Polled every millisecond, the link acts
  // (ACKs that tell the server it is there, then a new handshake after the idle timeout, retransmitted)
  // only once next_poll() has come.
  const std::size_t at_start = sent.size();
  TimePoint rejoined{};
  std::size_t acts = 0;
  for (int ms = 1; ms <= 12000; ++ms) {
    now += 1ms;
    const TimePoint due = link.next_poll();
    const auto state = link.state();
    const std::size_t before = sent.size();
    link.poll(now, send);
    if (now < due) {
      ASSERT_EQ(sent.size(), before) << ms << " ms";
      ASSERT_EQ(link.state(), state) << ms << " ms";
    }
    acts += sent.size() > before;
    if (rejoined == TimePoint{} && link.state() != ServerLink::State::established) rejoined = now;
  }
  // Keepalive ACKs every quarter of the idle timeout (2.5 s), then HELLOs from the idle timeout on.
  const auto idle = std::chrono::milliseconds(body.idle_timeout_ms);
  EXPECT_EQ(rejoined - (TimePoint{} + 1h), idle + 1ms);
  EXPECT_EQ(link.counters().acks_sent, 1u + 3u);  // the first when the MANIFEST came
  EXPECT_GT(acts, 4u);
  EXPECT_GT(sent.size(), at_start + 4);
}

}  // namespace
}  // namespace ncast::peer
