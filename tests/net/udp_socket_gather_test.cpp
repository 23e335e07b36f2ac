// Gathered packets (UdpSocket::commit with a borrowed middle): each arrives byte-identical to its head,
// middle and tail in a row, whether alone, beside whole packets, or in a GSO run whose segments the
// kernel cuts across iovec boundaries; and the queue holds each middle alive until the packet is sent.
#include <gtest/gtest.h>
#include <unistd.h>

#include <memory>
#include <random>

#include "net/udp_socket.hpp"

namespace ncast::net {
namespace {

using Bytes = std::vector<std::uint8_t>;

Bytes random_bytes(std::mt19937_64& rng, std::size_t n) {
  Bytes b(n);
  for (auto& x : b) x = static_cast<std::uint8_t>(rng());
  return b;
}

std::vector<Bytes> collect(UdpSocket& s, std::size_t want) {
  std::vector<Bytes> got;
  for (int tries = 0; tries < 200 && got.size() < want; ++tries) {
    s.receive([&](std::span<std::uint8_t> d, const Address&, auto) { got.emplace_back(d.begin(), d.end()); });
    if (got.size() < want) usleep(1000);
  }
  return got;
}

// Queues head || middle || tail as a gathered packet; what should arrive.
Bytes gathered(UdpSocket& s, const Bytes& head, const std::shared_ptr<const Bytes>& middle, const Bytes& tail,
               const Address& to) {
  if (s.full()) {
    EXPECT_TRUE(s.flush());
  }
  auto slot = s.slot();
  std::copy(head.begin(), head.end(), slot.begin());
  std::copy(tail.begin(), tail.end(), slot.begin() + static_cast<std::ptrdiff_t>(head.size()));
  s.commit(head.size(), {*middle, middle}, tail.size(), to);
  Bytes whole = head;
  whole.insert(whole.end(), middle->begin(), middle->end());
  whole.insert(whole.end(), tail.begin(), tail.end());
  return whole;
}

TEST(UdpSocketGather, GatheredPacketsArriveIdenticalAloneAndInGsoRuns) {
  boost::asio::io_context io;
  UdpSocket a(io, Address::parse("127.0.0.1:0"), 1 << 20, 1500);
  UdpSocket b(io, Address::parse("127.0.0.1:0"), 1 << 20, 1500);
  UdpSocket c(io, Address::parse("127.0.0.1:0"), 1 << 20, 1500);
  std::mt19937_64 rng(7);
  // Two shared middles, as two coded symbols every peer gets.
  const auto m1 = std::make_shared<const Bytes>(random_bytes(rng, 1052));
  const auto m2 = std::make_shared<const Bytes>(random_bytes(rng, 1052));
  std::vector<Bytes> to_b, to_c;
  for (int i = 0; i < 150; ++i) {
    const bool for_c = (i / 10) % 2 == 1;
    const Address to = for_c ? c.local() : b.local();
    auto& want = for_c ? to_c : to_b;
    if (i % 10 == 9) {
      // A whole packet ends each run, shorter than the gathered ones.
      const Bytes p = random_bytes(rng, 300);
      if (a.full()) {
        ASSERT_TRUE(a.flush());
      }
      std::copy(p.begin(), p.end(), a.slot().begin());
      a.commit(p.size(), to);
      want.push_back(p);
    } else {
      want.push_back(gathered(a, random_bytes(rng, 20), i % 2 ? m1 : m2, random_bytes(rng, 8), to));
    }
  }
  ASSERT_TRUE(a.flush());
  EXPECT_EQ(a.counters().packets_out, 150u);
  if (a.gso()) {
    EXPECT_GT(a.counters().gso_sends, 0u) << "runs of equal sizes to one peer go as GSO sends";
    // Each run of nine gathered packets and its shorter whole packet is one message, per peer in turn,
    // but for the two runs that the full queue's flushes cut (packets 60-69 and 120-129): 15 + 2.
    EXPECT_EQ(a.counters().messages_out, 17u);
  } else {
    EXPECT_EQ(a.counters().messages_out, 150u);
  }
  EXPECT_EQ(collect(b, to_b.size()), to_b);
  EXPECT_EQ(collect(c, to_c.size()), to_c);
  EXPECT_EQ(m1.use_count(), 1) << "the queue let go of the middles once sent";
}

TEST(UdpSocketGather, AMiddleOutlivesItsOwnerWhileQueued) {
  boost::asio::io_context io;
  UdpSocket a(io, Address::parse("127.0.0.1:0"), 1 << 20, 1500);
  UdpSocket b(io, Address::parse("127.0.0.1:0"), 1 << 20, 1500);
  std::mt19937_64 rng(11);
  std::vector<Bytes> want;
  std::weak_ptr<const Bytes> watched;
  for (int i = 0; i < 8; ++i) {
    // The owner (a cache that evicts) drops each middle at once, and new ones of the same size take
    // their place in memory: a queue that borrowed without holding would send these instead.
    auto middle = std::make_shared<const Bytes>(random_bytes(rng, 1052));
    want.push_back(gathered(a, random_bytes(rng, 20), middle, random_bytes(rng, 8), b.local()));
    watched = middle;
    middle.reset();
    const auto overwrite = std::make_shared<const Bytes>(1052, std::uint8_t{0xee});
    EXPECT_FALSE(watched.expired());
  }
  ASSERT_TRUE(a.flush());
  EXPECT_TRUE(watched.expired()) << "freed once sent";
  EXPECT_EQ(collect(b, want.size()), want);
}

}  // namespace
}  // namespace ncast::net
