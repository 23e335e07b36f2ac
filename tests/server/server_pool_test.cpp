// Servers sharing a port (ncast-server --threads): the sockets share it, a retry token minted by one
// server is honoured by another that holds the same key (and refused by one that does not), the session
// limit holds across threads, the counters are summed, and a stream replica sends what its stream does.
#include "server/server_pool.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <random>
#include <thread>

#include "coding/cpu_engine.hpp"
#include "net/udp_socket.hpp"
#include "protocol/handshake.hpp"
#include "server/locked_chunk_coder.hpp"

namespace ncast::server {
namespace {

using namespace std::chrono_literals;

struct Fixture {
  CpuEngine engine;
  std::unique_ptr<ChunkCoder> coder = make_engine_chunk_coder(engine);
  LockedChunkCoder shared{*coder};
  CodedCache cache{shared, 1 << 20};
  MediaStream stream{StreamInfo{"clip", stream_id_of("clip"), 7, 8, 64, 0, false}, cache};
  proto::Ed25519Identity identity = proto::Ed25519Identity::generate();

  explicit Fixture(std::size_t bytes = 8 * 64 * 3 + 77) {
    std::mt19937_64 rng(11);
    std::vector<std::uint8_t> data(bytes);
    for (auto& x : data) x = static_cast<std::uint8_t>(rng());
    for (std::size_t off = 0; off < data.size(); off += stream.segment_bytes())
      stream.append({data.data() + off, std::min(stream.segment_bytes(), data.size() - off)});
  }
};

// A peer's socket, blocking with a deadline.
class Client {
 public:
  explicit Client(boost::asio::io_context& io) : socket_(io, net::Address::parse("127.0.0.1:0"), 1 << 20, 2048) {}
  void send(std::span<const std::uint8_t> d, const net::Address& to) { ASSERT_TRUE(socket_.send_now(d, to)); }
  // The next datagram within 2 s, or an empty vector.
  std::vector<std::uint8_t> receive() {
    const auto deadline = std::chrono::steady_clock::now() + 2s;
    std::vector<std::uint8_t> got;
    while (got.empty() && std::chrono::steady_clock::now() < deadline) {
      socket_.receive(
          [&](std::span<std::uint8_t> d, const net::Address&, auto) {
            if (got.empty()) got.assign(d.begin(), d.end());
          },
          1);
      if (got.empty()) std::this_thread::sleep_for(1ms);
    }
    return got;
  }

 private:
  net::UdpSocket socket_;
};

proto::PacketType type_of(std::span<const std::uint8_t> d) {
  const auto p = proto::parse_prefix(d);
  return p ? p->type : proto::PacketType{};
}

proto::Join join_for(const std::string& stream) {
  proto::Join j;
  j.stream = stream;
  j.max_datagram = proto::kMinDatagram;
  return j;
}

// HELLO to `hello_to`, then the JOIN with its token to `join_to`: what answers the JOIN.
proto::PacketType handshake(
    Client& c, const net::Address& hello_to, const net::Address& join_to, const std::function<void()>& pump = [] {}) {
  proto::PeerHandshake h(join_for("clip"));
  c.send(h.hello(), hello_to);
  pump();
  const auto retry_datagram = c.receive();
  const auto retry = proto::decode_retry(retry_datagram);
  if (!retry) return proto::PacketType{};
  const auto join = h.on_retry(*retry);
  if (!join) return proto::PacketType{};
  c.send(*join, join_to);
  pump();
  return type_of(c.receive());
}

TEST(ServerPool, ATokenFromOneServerIsHonouredByAnotherWithTheSameKey) {
  Fixture f;
  boost::asio::io_context io;
  ServerConfig config;
  config.listen = net::Address::parse("127.0.0.1:0");
  std::array<std::uint8_t, 32> key{};
  proto::random_bytes(key);
  config.token_key = key;
  Server a(io, config, f.identity), b(io, config, f.identity);
  ServerConfig other = config;
  proto::random_bytes(key);
  other.token_key = key;
  Server c(io, other, f.identity);
  for (Server* s : {&a, &b, &c}) {
    s->add_stream(f.stream);
    s->start();
  }
  auto pump = [&] {
    for (int i = 0; i < 50; ++i) {
      io.poll();
      std::this_thread::sleep_for(1ms);
    }
  };
  Client peer(io), stranger(io);
  EXPECT_EQ(handshake(peer, a.local(), b.local(), pump), proto::PacketType::manifest);
  // Another key: the token is refused and a fresh RETRY answers the JOIN.
  EXPECT_EQ(handshake(stranger, a.local(), c.local(), pump), proto::PacketType::retry);
  EXPECT_EQ(b.metrics().manifests, 1u);
  EXPECT_EQ(c.metrics().drops[proto::DropReason::bad_token], 1u);
}

TEST(ServerPool, ThreadsShareThePortTheSessionLimitAndTheirCounters) {
  Fixture f;
  ServerConfig config;
  config.listen = net::Address::parse("127.0.0.1:0");
  config.max_sessions = 5;
  std::vector<std::string> errors;
  ServerPool pool(config, f.identity, 3, f.shared, 4 << 20, {&f.stream},
                  [&](const std::string& e) { errors.push_back(e); });
  ASSERT_NE(pool.local().port, 0);
  EXPECT_EQ(pool.threads(), 3u);
  pool.start();
  boost::asio::io_context io;
  std::vector<std::unique_ptr<Client>> clients;
  std::map<proto::PacketType, int> answers;
  for (int i = 0; i < 12; ++i) {
    clients.push_back(std::make_unique<Client>(io));
    ++answers[handshake(*clients.back(), pool.local(), pool.local())];
  }
  EXPECT_EQ(answers[proto::PacketType::manifest], 5);
  EXPECT_EQ(answers[proto::PacketType::reject], 7);  // busy
  const auto t = pool.totals();
  EXPECT_EQ(t.metrics.hellos, 12u);
  EXPECT_EQ(t.metrics.joins, 12u);
  EXPECT_EQ(t.metrics.sessions_created, 5u);
  EXPECT_EQ(t.sessions, 5u);
  pool.stop();
  EXPECT_TRUE(errors.empty());
  // Stopped: every session was closed with a BYE.
  EXPECT_EQ(pool.totals().metrics.sessions_closed[static_cast<std::size_t>(CloseReason::shutdown)], 5u);
}

TEST(ServerPool, TheThreadsBindOnePortAndTheKernelSpreadsPeersOverThem) {
  Fixture f;
  ServerConfig config;
  config.listen = net::Address::parse("127.0.0.1:0");
  ServerPool pool(config, f.identity, 4, f.shared, 4 << 20, {&f.stream}, [](const std::string&) {});
  pool.start();
  boost::asio::io_context io;
  // HELLOs from 64 addresses: all answered through the one port.
  int retries = 0;
  std::vector<std::unique_ptr<Client>> clients;
  for (int i = 0; i < 64; ++i) {
    clients.push_back(std::make_unique<Client>(io));
    proto::PeerHandshake h(join_for("clip"));
    clients.back()->send(h.hello(), pool.local());
    retries += type_of(clients.back()->receive()) == proto::PacketType::retry;
  }
  EXPECT_EQ(retries, 64);
  EXPECT_EQ(pool.totals().metrics.hellos, 64u);
}

// totals() is asked for every stats interval and every /metrics scrape while the threads serve; what
// it hands the threads must not outlive the call. A thread still touching the caller's frame after the
// answer came back (a lock released after the promise was kept) is a race ThreadSanitizer reports here;
// in ncast-server it overwrote a mutex and aborted in glibc's tpp.c.
TEST(ServerPool, TotalsAskedOverAndOverWhileTheThreadsRunLeaveThemNothingOfTheCaller) {
  Fixture f;
  ServerConfig config;
  config.listen = net::Address::parse("127.0.0.1:0");
  ServerPool pool(config, f.identity, 2, f.shared, 4 << 20, {&f.stream}, [](const std::string&) {});
  pool.start();
  boost::asio::io_context io;
  Client peer(io);
  proto::PeerHandshake h(join_for("clip"));
  peer.send(h.hello(), pool.local());
  ASSERT_EQ(type_of(peer.receive()), proto::PacketType::retry);
  for (int i = 0; i < 300; ++i) {
    const auto t = pool.totals();
    ASSERT_EQ(t.metrics.hellos, 1u) << "call " << i;
    ASSERT_EQ(t.sessions, 0u);
  }
}

TEST(StreamReplica, SendsWhatItsStreamSendsAndFollowsItsGrowth) {
  Fixture f(8 * 64 + 10);
  CodedCache own(f.shared, 1 << 20);
  StreamReplica replica(f.stream, own);
  ASSERT_EQ(replica.segment_count(), 2u);
  EXPECT_FALSE(replica.final());
  auto body = [](SymbolSource& s, bool systematic, std::uint32_t seg, std::uint32_t i) {
    std::vector<std::uint8_t> out(2048, 0xA5);
    proto::Writer w(out);
    const bool ok = systematic ? s.write_systematic(seg, i, w) : s.write_coded(seg, i, w);
    out.resize(ok ? w.size() : 0);
    return out;
  };
  for (std::uint32_t seg = 0; seg < 2; ++seg) {
    EXPECT_EQ(replica.descriptor(seg).hash, f.stream.descriptor(seg).hash);
    EXPECT_EQ(replica.rank(seg), f.stream.rank(seg));
    for (std::uint32_t i = 0; i < f.stream.symbols_of(seg); ++i)
      EXPECT_EQ(body(replica, true, seg, i), body(f.stream, true, seg, i));
    for (std::uint32_t j = 0; j < 40; ++j) EXPECT_EQ(body(replica, false, seg, j), body(f.stream, false, seg, j));
  }
  EXPECT_TRUE(body(replica, true, 1, 1).empty());   // segment 1 has 1 symbol
  EXPECT_TRUE(body(replica, false, 2, 0).empty());  // no segment 2 yet
  std::vector<std::uint8_t> more(300, 9);
  f.stream.append(more);
  f.stream.finish();
  replica.extend({f.stream.segment(2)}, true, 0, f.stream.live_edge(), 1'260'000);
  EXPECT_TRUE(replica.final());
  EXPECT_EQ(replica.live_edge(), 2u);
  EXPECT_EQ(replica.info().bitrate, 1'260'000u);
  EXPECT_EQ(replica.segment_count(), 3u);
  EXPECT_EQ(body(replica, false, 2, 3), body(f.stream, false, 2, 3));
}

}  // namespace
}  // namespace ncast::server
