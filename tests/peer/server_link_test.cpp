// ServerLink's handshake on a path where the server answers every HELLO but no JOIN, as one does after
// closing a handshake whose JOINs it stopped hearing (it then drops them as replays).
#include "peer/server_link.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
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

  std::map<proto::Nonce, int> joins;  // JOINs sent per nonce
  int hellos = 0;
  std::size_t seen = 0;
  auto now = TimePoint{} + 1h;
  link.start(now, send);
  for (int tick = 0; tick < 2000 && link.state() != ServerLink::State::failed; ++tick) {
    for (; seen < sent.size(); ++seen) {
      auto& d = sent[seen];
      if (auto hello = proto::decode_hello(d)) {
        ++hellos;
        auto retry = proto::encode(proto::Retry{hello->nonce, std::vector<std::uint8_t>(16, 7)});
        link.on_datagram(retry, now, send);
      } else if (auto join = proto::decode_join(d)) {
        ++joins[join->nonce];
      }
    }
    now += 50ms;
    link.poll(now, send);
  }
  ASSERT_EQ(link.state(), ServerLink::State::failed);
  EXPECT_EQ(link.failure(), "the server does not complete the handshake");
  // Three fresh nonces after the first, each tried six times, the last its full twelve.
  ASSERT_EQ(joins.size(), 4u);
  std::vector<int> counts;
  counts.reserve(joins.size());
  for (const auto& [nonce, count] : joins) counts.push_back(count);
  std::sort(counts.begin(), counts.end());
  EXPECT_EQ(counts, (std::vector<int>{6, 6, 6, 12}));
  EXPECT_EQ(hellos, 4);
  EXPECT_EQ(link.counters().handshakes, 4u);
}

}  // namespace
}  // namespace ncast::peer
