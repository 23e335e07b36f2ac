// ReadySet: the sockets of a swarm thread watched through one epoll set of their own.
#include "peer/swarm/ready_set.hpp"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <array>
#include <chrono>
#include <functional>
#include <vector>

namespace ncast::swarm {
namespace {

// A non-blocking UDP socket on 127.0.0.1 that counts the datagrams it reads when told it is readable.
struct Socket : Readable {
  Socket() {
    fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    socklen_t len = sizeof addr;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  ~Socket() { ::close(fd); }
  void on_readable() override {
    ++calls;
    std::array<char, 64> buf;
    for (int i = 0; i < read_per_call; ++i) {
      if (::recv(fd, buf.data(), buf.size(), 0) < 0) break;
      ++datagrams;
    }
    if (after) after();
  }
  int fd = -1;
  sockaddr_in addr{};
  int read_per_call = 1 << 30;  // drain
  int calls = 0, datagrams = 0;
  std::function<void()> after;
};

void send_to(const Socket& to, int count) {
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  for (int i = 0; i < count; ++i)
    ASSERT_EQ(::sendto(fd, "x", 1, 0, reinterpret_cast<const sockaddr*>(&to.addr), sizeof to.addr), 1);
  ::close(fd);
}

// Runs the io_context until done() or a second has passed; true when done() held.
bool run_until(boost::asio::io_context& io, const std::function<bool()>& done) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  while (!done() && std::chrono::steady_clock::now() < end) io.run_for(std::chrono::milliseconds(5));
  return done();
}

TEST(ReadySet, EachReadySocketIsCalledWithItsDatagrams) {
  boost::asio::io_context io;
  ReadySet set(io);
  std::vector<Socket> sockets(5);
  for (auto& s : sockets) set.add(s.fd, s);
  for (int i = 0; i < 5; ++i) send_to(sockets[i], i + 1);
  ASSERT_TRUE(run_until(io, [&] {
    int sum = 0;
    for (auto& s : sockets) sum += s.datagrams;
    return sum == 15;
  }));
  for (int i = 0; i < 5; ++i) EXPECT_EQ(sockets[i].datagrams, i + 1) << "socket " << i;
  // Nothing more arrives, so nobody is called again.
  std::vector<int> calls;
  for (auto& s : sockets) calls.push_back(s.calls);
  io.run_for(std::chrono::milliseconds(30));
  for (int i = 0; i < 5; ++i) EXPECT_EQ(sockets[i].calls, calls[i]) << "socket " << i;
  set.close();
}

TEST(ReadySet, ASocketLeftWithDatagramsIsReportedAgain) {
  boost::asio::io_context io;
  ReadySet set(io);
  Socket s;
  s.read_per_call = 1;
  set.add(s.fd, s);
  send_to(s, 4);
  ASSERT_TRUE(run_until(io, [&] { return s.datagrams == 4; }));
  EXPECT_GE(s.calls, 4);
  set.close();
}

TEST(ReadySet, RemovedSocketsAreNotCalledAndCloseLetsTheContextFinish) {
  boost::asio::io_context io;
  ReadySet set(io);
  Socket kept, removed;
  set.add(kept.fd, kept);
  set.add(removed.fd, removed);
  set.remove(removed.fd);
  send_to(removed, 2);
  send_to(kept, 1);
  ASSERT_TRUE(run_until(io, [&] { return kept.datagrams == 1; }));
  io.run_for(std::chrono::milliseconds(30));
  EXPECT_EQ(removed.calls, 0);
  // Closing from a call-back: the other ready sockets of that batch are not called, and with no work
  // left io.run() returns instead of waiting for the set forever.
  Socket a, b;
  set.add(a.fd, a);
  set.add(b.fd, b);
  a.after = [&] { set.close(); };
  b.after = [&] { set.close(); };
  send_to(a, 1);
  send_to(b, 1);
  ::usleep(20000);  // both queued before the set is looked at
  io.restart();
  const auto start = std::chrono::steady_clock::now();
  io.run();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  EXPECT_EQ(a.calls + b.calls, 1);
}

TEST(ReadySet, AddingASocketTwiceIsAnError) {
  boost::asio::io_context io;
  ReadySet set(io);
  Socket s;
  set.add(s.fd, s);
  EXPECT_THROW(set.add(s.fd, s), std::system_error);
  set.close();
}

}  // namespace
}  // namespace ncast::swarm
