// udp-forwarder's relay on loopback: datagrams pass both ways unchanged, --corrupt flips exactly one
// bit, --delay-ms holds them, --jitter-ms and --reorder reorder them, --rebind-ms moves a client to a
// new upstream port and drops what the server sends to the old one; the program refuses bad options.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "tools/udp-forwarder/forwarder.hpp"

namespace ncast::tools {
namespace {

using Clock = std::chrono::steady_clock;

// A blocking UDP socket on 127.0.0.1 with a receive timeout, so that a lost datagram fails the test.
struct Socket {
  int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  Socket() {
    const auto any = net::Address::parse("127.0.0.1:0");
    sockaddr_storage sa{};
    const auto len = any.to_sockaddr(sa);
    EXPECT_EQ(::bind(fd, reinterpret_cast<const sockaddr*>(&sa), len), 0);
    const timeval timeout{2, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    const int buffer = 1 << 20;  // a burst of 200 datagrams outgrew the default on a busy machine
    ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buffer, sizeof buffer);
  }
  ~Socket() { ::close(fd); }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;

  net::Address local() const {
    sockaddr_storage sa{};
    socklen_t len = sizeof sa;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len);
    return net::Address::from_sockaddr(reinterpret_cast<const sockaddr*>(&sa));
  }
  void send(const std::vector<std::uint8_t>& d, const net::Address& to) const {
    sockaddr_storage sa{};
    const auto len = to.to_sockaddr(sa);
    ASSERT_EQ(::sendto(fd, d.data(), d.size(), 0, reinterpret_cast<const sockaddr*>(&sa), len),
              static_cast<ssize_t>(d.size()));
  }
  // The next datagram and where it came from; empty after the timeout.
  std::vector<std::uint8_t> receive(net::Address* from = nullptr) const {
    std::vector<std::uint8_t> d(2048);
    sockaddr_storage sa{};
    socklen_t len = sizeof sa;
    const auto n = ::recvfrom(fd, d.data(), d.size(), 0, reinterpret_cast<sockaddr*>(&sa), &len);
    d.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    if (from) *from = net::Address::from_sockaddr(reinterpret_cast<const sockaddr*>(&sa));
    return d;
  }
};

std::vector<std::uint8_t> numbered(std::uint32_t i) {
  std::vector<std::uint8_t> d(1200, 0x5a);
  for (int b = 0; b < 4; ++b) d[b] = static_cast<std::uint8_t>(i >> (8 * b));
  return d;
}
std::uint32_t number_of(const std::vector<std::uint8_t>& d) {
  std::uint32_t i = 0;
  for (int b = 0; b < 4; ++b) i |= static_cast<std::uint32_t>(d[b]) << (8 * b);
  return i;
}

ForwarderOptions impairing(const net::Address& server, double corrupt, double delay_ms, double jitter_ms) {
  ForwarderOptions o;
  o.listen = net::Address::parse("127.0.0.1:0");
  o.server = server;
  o.corrupt = corrupt;
  o.delay_ms = delay_ms;
  o.jitter_ms = jitter_ms;
  return o;
}

// A forwarder from a kernel-chosen loopback port to the server, running until the fixture ends.
struct Running {
  Forwarder forwarder;
  std::atomic<bool> stop{false};
  std::thread thread;
  explicit Running(const ForwarderOptions& o)
      : forwarder(o), thread([this] { forwarder.run([this] { return stop.load(); }); }) {}
  ~Running() {
    stop = true;
    thread.join();
  }
};

TEST(UdpForwarder, RelaysBothWaysUnchanged) {
  Socket server, peer;
  Running f(impairing(server.local(), 0, 0, 0));
  for (std::uint32_t i = 0; i < 50; ++i) peer.send(numbered(i), f.forwarder.local());
  net::Address upstream;
  for (std::uint32_t i = 0; i < 50; ++i) ASSERT_EQ(server.receive(&upstream), numbered(i));
  server.send(numbered(7), upstream);  // the reply goes back through the peer's own upstream socket
  EXPECT_EQ(peer.receive(), numbered(7));
}

TEST(UdpForwarder, CorruptFlipsExactlyOneBit) {
  Socket server, peer;
  Running f(impairing(server.local(), 1.0, 0, 0));
  for (std::uint32_t i = 0; i < 50; ++i) peer.send(numbered(i), f.forwarder.local());
  for (std::uint32_t i = 0; i < 50; ++i) {
    const auto got = server.receive();
    const auto sent = numbered(i);
    ASSERT_EQ(got.size(), sent.size());
    int flipped = 0;
    for (std::size_t b = 0; b < got.size(); ++b) flipped += std::popcount(static_cast<unsigned>(got[b] ^ sent[b]));
    EXPECT_EQ(flipped, 1) << "datagram " << i;
  }
}

// n numbered datagrams, a millisecond's pause after every ten: the forwarder's own socket has the
// default buffer, which a burst of 200 could overflow while a busy machine held the forwarder back.
void send_spaced(const Socket& peer, std::uint32_t n, const net::Address& to) {
  for (std::uint32_t i = 0; i < n; ++i) {
    peer.send(numbered(i), to);
    if (i % 10 == 9) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

TEST(UdpForwarder, DelayHoldsAndJitterReorders) {
  Socket server, peer;
  Running f(impairing(server.local(), 0, 30, 20));
  const auto sent_at = Clock::now();
  send_spaced(peer, 200, f.forwarder.local());
  std::vector<std::uint32_t> order;
  for (int i = 0; i < 200; ++i) {
    const auto got = server.receive();
    ASSERT_FALSE(got.empty()) << "only " << i << " of 200 datagrams arrived";
    if (i == 0) {
      EXPECT_GE(Clock::now() - sent_at, std::chrono::milliseconds(10));
    }
    order.push_back(number_of(got));
  }
  EXPECT_FALSE(std::is_sorted(order.begin(), order.end()));
}

TEST(UdpForwarder, ReorderHoldsAShareLonger) {
  Socket server, peer;
  auto o = impairing(server.local(), 0, 0, 0);
  o.reorder = 0.25;
  o.reorder_ms = 30;
  Running f(o);
  send_spaced(peer, 200, f.forwarder.local());
  std::vector<std::uint32_t> order;
  for (int i = 0; i < 200; ++i) {
    const auto got = server.receive();
    ASSERT_FALSE(got.empty()) << "only " << i << " of 200 datagrams arrived";
    order.push_back(number_of(got));
  }
  EXPECT_FALSE(std::is_sorted(order.begin(), order.end()));
}

TEST(UdpForwarder, RebindMovesTheClientToANewPortAndDropsTheOld) {
  Socket server, peer;
  auto o = impairing(server.local(), 0, 0, 0);
  o.rebind = std::chrono::milliseconds(100);
  Running f(o);
  net::Address before, after;
  peer.send(numbered(1), f.forwarder.local());
  ASSERT_EQ(server.receive(&before), numbered(1));
  std::this_thread::sleep_for(std::chrono::milliseconds(250));
  peer.send(numbered(2), f.forwarder.local());
  ASSERT_EQ(server.receive(&after), numbered(2));
  EXPECT_NE(before, after);
  server.send(numbered(3), before);  // to the old binding: lost, as behind a NAT
  server.send(numbered(4), after);
  EXPECT_EQ(peer.receive(), numbered(4));
}

// The program's exit status and stderr for args.
std::pair<int, std::string> run_program(const std::string& args) {
  const std::string err = ::testing::TempDir() + "udp_forwarder_stderr";
  const int status = std::system((std::string(UDP_FORWARDER_EXE) + " " + args + " >/dev/null 2>" + err).c_str());
  std::ifstream in(err);
  return {WEXITSTATUS(status), std::string(std::istreambuf_iterator<char>(in), {})};
}

TEST(UdpForwarder, BadOptionsAreRefusedByName) {
  for (const auto& [args, named] : std::vector<std::pair<std::string, std::string>>{
           {"", "--server is required"},
           {"--server 127.0.0.1:9 --reorder 1.5", "--reorder 1.5 is out of range"},
           {"--server 127.0.0.1:9 --delay-ms 5 --jitter-ms 6", "--jitter-ms 6 is out of range"},
           {"--server nowhere", "--server 'nowhere' is not a numeric HOST:PORT"},
           {"--to 127.0.0.1:9", "unrecognised option '--to'"}}) {
    const auto [code, err] = run_program(args);
    EXPECT_EQ(code, 2) << args;
    EXPECT_NE(err.find(named), std::string::npos) << args << ": " << err;
  }
}

}  // namespace
}  // namespace ncast::tools
