// SocketGroups: simulated peers sharing sockets toward a loopback server, each seen by the server
// under an address of its own, and each given exactly the datagrams sent to that address.
#include "peer/swarm/socket_group.hpp"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif

namespace ncast::swarm {
namespace {

// Records what the group hands it.
struct Member final : GroupMember {
  void on_datagram(std::span<std::uint8_t> d, const net::Address& from, TimePoint) override {
    got.emplace_back(d.begin(), d.end());
    senders.push_back(from);
  }
  void after_input(TimePoint) override { ++rounds; }
  std::vector<std::string> got;
  std::vector<net::Address> senders;
  int rounds = 0;
  SocketGroups::Place place;
};

// A plain UDP socket standing for the server.
struct Server {
  explicit Server(const char* at = "127.0.0.1:0") {
    address = net::Address::parse(at);
    fd = ::socket(address.family == 4 ? AF_INET : AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_storage ss{};
    socklen_t len = address.to_sockaddr(ss);
    EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&ss), len), 0);
    len = sizeof ss;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len);
    address = net::Address::from_sockaddr(reinterpret_cast<sockaddr*>(&ss));
    timeval t{1, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &t, sizeof t);
  }
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;
  ~Server() { ::close(fd); }

  // The next datagram and where it came from (family 0 if none came within a second).
  std::pair<std::string, net::Address> receive() const {
    char buf[2048];
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    const auto n = ::recvfrom(fd, buf, sizeof buf, 0, reinterpret_cast<sockaddr*>(&ss), &len);
    if (n < 0) return {{}, net::Address{.family = 0}};
    return {std::string(buf, static_cast<std::size_t>(n)),
            net::Address::from_sockaddr(reinterpret_cast<sockaddr*>(&ss))};
  }
  // Whether a datagram is waiting, without waiting for one.
  bool waiting() const {
    char c;
    return ::recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) >= 0;
  }
  void send(const net::Address& to, const std::string& d) const {
    sockaddr_storage ss{};
    const socklen_t len = to.to_sockaddr(ss);
    ASSERT_EQ(::sendto(fd, d.data(), d.size(), 0, reinterpret_cast<sockaddr*>(&ss), len), static_cast<long>(d.size()));
  }
  int fd = -1;
  net::Address address;
};

std::span<const std::uint8_t> bytes(const std::string& s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

bool run_until(boost::asio::io_context& io, const std::function<bool()>& done) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (!done() && std::chrono::steady_clock::now() < end) io.run_for(std::chrono::milliseconds(5));
  return done();
}

TEST(SocketGroups, EachPeerIsSeenUnderItsOwnAddressAndGetsWhatIsSentToIt) {
  boost::asio::io_context io;
  SocketGroups groups(io, 8, 1500);
  Server server;
  std::vector<Member> members(20);
  for (auto& m : members) m.place = groups.seat(m, {server.address}, 64 << 10);
  EXPECT_EQ(groups.sockets(), 3u);  // 8 + 8 + 4

  // Each peer speaks; the server sees twenty distinct hosts, each where the group said it was.
  std::set<std::string> hosts;
  for (std::size_t i = 0; i < members.size(); ++i) {
    const auto& p = members[i].place;
    EXPECT_TRUE(p.local.is_loopback());
    EXPECT_NE(p.local.to_string().rfind("127.0.0.1:", 0), 0u);
    std::uint64_t refused = 0;
    p.group->send(p.local, server.address, bytes("hello " + std::to_string(i)), refused);
    ASSERT_EQ(refused, 0u);
    const auto [d, from] = server.receive();
    EXPECT_EQ(d, "hello " + std::to_string(i));
    EXPECT_EQ(from, p.local) << "peer " << i;
    hosts.insert(from.to_string().substr(0, from.to_string().find(':')));
  }
  EXPECT_EQ(hosts.size(), members.size());

  // The server answers each, in reverse order and twice for some: each gets its own and nothing else.
  for (std::size_t i = members.size(); i-- > 0;)
    for (std::size_t k = 0; k < 1 + i % 2; ++k) server.send(members[i].place.local, "to " + std::to_string(i));
  ASSERT_TRUE(run_until(io, [&] {
    std::size_t n = 0;
    for (const auto& m : members) n += m.got.size();
    return n == 30;
  }));
  for (std::size_t i = 0; i < members.size(); ++i) {
    ASSERT_EQ(members[i].got.size(), 1 + i % 2) << "peer " << i;
    for (const auto& d : members[i].got) EXPECT_EQ(d, "to " + std::to_string(i)) << "peer " << i;
    EXPECT_EQ(members[i].senders.front(), server.address);
    EXPECT_GE(members[i].rounds, 1);
  }
  EXPECT_EQ(groups.unclaimed(), 0u);

  // A peer gone: what still comes for its address reaches nobody else.
  groups.leave(members[3], members[3].place);
  server.send(members[3].place.local, "late");
  ASSERT_TRUE(run_until(io, [&] { return groups.unclaimed() == 1; }));
  for (const auto& m : members) EXPECT_LE(m.got.size(), 2u);
  for (auto& m : members) groups.leave(m, m.place);
  groups.sweep();
  EXPECT_EQ(groups.sockets(), 0u);
  groups.close();
}

// Held sends (a tick of all peers, a round of input) leave at release, more than one sendmmsg's worth
// per group too, each from its peer's address and in the order sent.
TEST(SocketGroups, HeldSendsLeaveAtReleaseEachFromItsPeerInOrder) {
  boost::asio::io_context io;
  SocketGroups groups(io, 8, 1500);
  Server server;
  std::vector<Member> members(12);
  for (auto& m : members) m.place = groups.seat(m, {server.address}, 64 << 10);
  groups.hold();
  std::uint64_t refused = 0;
  for (int k = 0; k < 5; ++k)  // 40 datagrams on the first group's socket
    for (std::size_t i = 0; i < members.size(); ++i)
      members[i].place.group->send(members[i].place.local, server.address,
                                   bytes(std::to_string(i) + "/" + std::to_string(k)), refused);
  // The first group's 32 left when its batch filled; none of the second's yet.
  std::map<std::string, std::vector<std::string>> got;
  for (int n = 0; n < 32; ++n) {
    const auto [d, from] = server.receive();
    ASSERT_NE(from.family, 0) << n;
    got[from.to_string()].push_back(d);
  }
  EXPECT_FALSE(server.waiting());
  groups.release();
  for (int n = 32; n < 60; ++n) {
    const auto [d, from] = server.receive();
    ASSERT_NE(from.family, 0) << n;
    got[from.to_string()].push_back(d);
  }
  EXPECT_EQ(refused, 0u);
  ASSERT_EQ(got.size(), members.size());
  for (std::size_t i = 0; i < members.size(); ++i) {
    const auto& d = got[members[i].place.local.to_string()];
    ASSERT_EQ(d.size(), 5u) << "peer " << i;
    for (int k = 0; k < 5; ++k) EXPECT_EQ(d[k], std::to_string(i) + "/" + std::to_string(k));
  }
  // Released: a send leaves at once again.
  members[0].place.group->send(members[0].place.local, server.address, bytes("now"), refused);
  EXPECT_EQ(server.receive().first, "now");
  for (auto& m : members) groups.leave(m, m.place);
  groups.close();
}

// A GSO run from the server crosses loopback as one message (UDP GRO on the peers' socket): split
// again into its datagrams, all for the peer it was sent to.
TEST(SocketGroups, AGroRunGoesWholeToItsPeer) {
  boost::asio::io_context io;
  SocketGroups groups(io, 4, 1500);
  Server server;
  std::vector<Member> members(4);
  for (auto& m : members) m.place = groups.seat(m, {server.address}, 64 << 10);
  const int segment = 100;
  if (::setsockopt(server.fd, IPPROTO_UDP, UDP_SEGMENT, &segment, sizeof segment) != 0)
    GTEST_SKIP() << "no UDP GSO here";
  std::string run;
  for (char c : std::string("abcde")) run += std::string(100, c);
  server.send(members[2].place.local, run);
  ASSERT_TRUE(run_until(io, [&] { return members[2].got.size() == 5; }));
  for (std::size_t k = 0; k < 5; ++k) EXPECT_EQ(members[2].got[k], std::string(100, "abcde"[k]));
  EXPECT_TRUE(members[0].got.empty() && members[1].got.empty() && members[3].got.empty());
  for (auto& m : members) groups.leave(m, m.place);
  groups.close();
}

// Toward an IPv6 (or any non-IPv4-loopback) server, and with one peer per socket, each peer has a
// socket of its own, as before sockets were shared.
TEST(SocketGroups, OtherServersGetASocketPerPeer) {
  boost::asio::io_context io;
  const auto v4 = net::Address::parse("127.0.0.1:5000");
  EXPECT_FALSE(shares_sockets({net::Address::parse("[::1]:5000")}, 64));
  EXPECT_FALSE(shares_sockets({net::Address::parse("192.0.2.1:5000")}, 64));
  EXPECT_FALSE(shares_sockets({v4, net::Address::parse("192.0.2.1:5000")}, 64));
  EXPECT_FALSE(shares_sockets({v4}, 1));
  EXPECT_TRUE(shares_sockets({v4, net::Address::parse("127.0.0.2:5000")}, 2));
  SocketGroups groups(io, 1, 1500);
  Server server;
  std::vector<Member> members(3);
  for (auto& m : members) m.place = groups.seat(m, {server.address}, 64 << 10);
  EXPECT_EQ(groups.sockets(), 3u);
  for (std::size_t i = 0; i < members.size(); ++i) {
    const auto& p = members[i].place;
    std::uint64_t refused = 0;
    p.group->send(p.local, server.address, bytes("x"), refused);
    ASSERT_EQ(refused, 0u);
    EXPECT_EQ(server.receive().second, p.local);
    EXPECT_EQ(p.local.to_string().rfind("127.0.0.1:", 0), 0u);
  }
  for (auto& m : members) groups.leave(m, m.place);
  groups.close();
}

}  // namespace
}  // namespace ncast::swarm
