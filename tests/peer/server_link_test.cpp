// ServerLink's handshake on a path where the server answers every HELLO but no JOIN, as one does after
// closing a handshake whose JOINs it stopped hearing (it then drops them as replays).
#include "peer/server_link.hpp"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <vector>

#include "protocol/packets.hpp"

namespace ncast::peer {
namespace {

using namespace std::chrono_literals;

TEST(ServerLink, UnansweredJoinsStartOverWithANewNonceThenGiveUp) {
  StreamReceiver receiver({}, [](std::span<const std::uint8_t>) {});
  LinkOptions options;
  options.server = net::Address::parse("127.0.0.1:7000");
  options.stream = "movie";
  ServerLink link(options, receiver);
  std::vector<std::vector<std::uint8_t>> sent;
  const ServerLink::Send send = [&](std::span<const std::uint8_t> d) { sent.emplace_back(d.begin(), d.end()); };

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

}  // namespace
}  // namespace ncast::peer
