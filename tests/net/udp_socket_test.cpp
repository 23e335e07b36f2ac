// The batched socket on loopback: every queued packet arrives intact and in order, whether it went
// out alone or merged into a GSO send with its neighbours, and whether that send reached the receiver
// whole (UDP GRO: split again there) or was split by the kernel.
#include "net/udp_socket.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <thread>

namespace ncast::net {
namespace {

TEST(UdpSocket, BatchesArriveIntact) {
  boost::asio::io_context io;
  UdpSocket a(io, Address::parse("127.0.0.1:0"), 1 << 20, 1500);
  UdpSocket b(io, Address::parse("127.0.0.1:0"), 1 << 20, 1500);
  UdpSocket c(io, Address::parse("127.0.0.1:0"), 1 << 20, 1500);
  ASSERT_NE(a.local().port, 0);
  std::mt19937_64 rng(3);
  std::vector<std::vector<std::uint8_t>> to_b, to_c;
  // Runs of equal sizes to one destination (GSO candidates), a short tail, and interleaving.
  for (int i = 0; i < 150; ++i) {
    const bool for_c = (i / 20) % 2 == 1;
    const std::size_t len = (i % 20 == 19) ? 300 : 1100;
    std::vector<std::uint8_t> p(len);
    for (auto& x : p) x = static_cast<std::uint8_t>(rng());
    auto slot = a.slot();
    if (slot.empty()) {
      ASSERT_TRUE(a.flush());
      slot = a.slot();
    }
    std::copy(p.begin(), p.end(), slot.begin());
    a.commit(len, for_c ? c.local() : b.local());
    (for_c ? to_c : to_b).push_back(p);
  }
  ASSERT_TRUE(a.flush());
  EXPECT_EQ(a.counters().packets_out, 150u);
  if (a.gso()) {
    EXPECT_GT(a.counters().gso_sends, 0u);
  }
  auto collect = [](UdpSocket& s, std::size_t want) {
    std::vector<std::vector<std::uint8_t>> got;
    for (int tries = 0; tries < 200 && got.size() < want; ++tries) {
      s.receive([&](std::span<std::uint8_t> d, const net::Address&, auto) { got.emplace_back(d.begin(), d.end()); });
      if (got.size() < want) usleep(1000);
    }
    return got;
  };
  EXPECT_EQ(collect(b, to_b.size()), to_b);
  EXPECT_EQ(collect(c, to_c.size()), to_c);
  if (a.gso() && b.gro()) {
    EXPECT_GT(b.counters().gro_messages, 0u);
  }
}

// A datagram read late is stamped with its arrival, not the read: 30 ms unread, it still reads as
// arrived near its sending (within 15 ms: a busy machine may hold the sender between the two), and a
// later one as later.
TEST(UdpSocket, DatagramsCarryTheirArrivalTime) {
  using Clock = std::chrono::steady_clock;
  boost::asio::io_context io;
  UdpSocket a(io, Address::parse("127.0.0.1:0"), 1 << 16);
  UdpSocket b(io, Address::parse("127.0.0.1:0"), 1 << 16);
  const std::uint8_t one[] = {1}, two[] = {2};
  const Clock::time_point sent = Clock::now();
  ASSERT_TRUE(a.send_now(one, b.local()));
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_TRUE(a.send_now(two, b.local()));
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  std::vector<Clock::time_point> arrived;
  const Clock::time_point read = Clock::now();
  b.receive([&](std::span<std::uint8_t>, const Address&, Clock::time_point at) { arrived.push_back(at); });
  ASSERT_EQ(arrived.size(), 2u);
  EXPECT_GE(arrived[0], sent);
  EXPECT_LT(arrived[0], sent + std::chrono::milliseconds(15));
  EXPECT_GE(arrived[1] - arrived[0], std::chrono::milliseconds(10));
  EXPECT_LT(arrived[1], read - std::chrono::milliseconds(20));
}

// Unwatched, the socket wakes no waiter but still sends and receives; watched again, waits work.
TEST(UdpSocket, UnwatchedItStillCarriesDatagrams) {
  boost::asio::io_context io;
  UdpSocket a(io, Address::parse("127.0.0.1:0"), 1 << 16);
  UdpSocket b(io, Address::parse("127.0.0.1:0"), 1 << 16);
  bool woken = false;
  b.asio().async_wait(boost::asio::ip::udp::socket::wait_read, [&](const boost::system::error_code& ec) {
    EXPECT_EQ(ec, boost::asio::error::operation_aborted);
    woken = true;
  });
  b.watch(false);
  EXPECT_FALSE(b.watched());
  const std::uint8_t d[] = {7, 7};
  ASSERT_TRUE(a.send_now(d, b.local()));
  io.run_for(std::chrono::milliseconds(20));
  EXPECT_TRUE(woken);  // with the abort, not the datagram
  std::size_t got = 0;
  b.receive([&](std::span<std::uint8_t> x, const Address&, auto) { got += x.size(); });
  EXPECT_EQ(got, 2u);
  b.watch(true);
  bool readable = false;
  b.asio().async_wait(boost::asio::ip::udp::socket::wait_read,
                      [&](const boost::system::error_code& ec) { readable = !ec; });
  ASSERT_TRUE(a.send_now(d, b.local()));
  io.restart();
  io.run_for(std::chrono::milliseconds(200));
  EXPECT_TRUE(readable);
}

TEST(UdpSocket, BindFailureNamesTheAddress) {
  boost::asio::io_context io;
  UdpSocket a(io, Address::parse("127.0.0.1:0"), 1 << 16);
  try {
    UdpSocket b(io, a.local(), 1 << 16);
    FAIL() << "bound the same port twice";
  } catch (const std::system_error& e) {
    EXPECT_NE(std::string(e.what()).find(a.local().to_string()), std::string::npos);
  }
}

}  // namespace
}  // namespace ncast::net
