// Sessions per source: an address and its network are capped, other networks are not touched, and a
// closed session gives its place back.
#include "server/source_limits.hpp"

#include <gtest/gtest.h>

namespace ncast::server {
namespace {

net::Address at(const char* text) { return net::Address::parse(text); }

TEST(SourceLimits, AnAddressIsCappedWhateverItsPorts) {
  SourceLimits limits(3);
  for (int port = 1; port <= 3; ++port) EXPECT_TRUE(limits.try_add(at(("10.0.0.1:" + std::to_string(port)).c_str())));
  EXPECT_FALSE(limits.has_room(at("10.0.0.1:99")));
  EXPECT_FALSE(limits.try_add(at("10.0.0.1:99")));
  EXPECT_TRUE(limits.try_add(at("10.0.0.2:1"))) << "another address of the network";
  EXPECT_TRUE(limits.try_add(at("10.0.1.1:1"))) << "another network";
  limits.remove(at("10.0.0.1:2"));
  EXPECT_TRUE(limits.try_add(at("10.0.0.1:100"))) << "a closed session's place is free again";
}

TEST(SourceLimits, ANetworkHoldsFourTimesAnAddress) {
  SourceLimits limits(2);
  EXPECT_EQ(limits.per_network(), 8u);
  int admitted = 0;
  for (int host = 1; host <= 10; ++host)
    for (int port = 1; port <= 2; ++port)
      admitted += limits.try_add(at(("192.0.2." + std::to_string(host) + ":" + std::to_string(port)).c_str()));
  EXPECT_EQ(admitted, 8) << "the /24";
  EXPECT_TRUE(limits.try_add(at("192.0.3.1:1")));
  // IPv6: the /64 is the network.
  for (int i = 0; i < 8; ++i)
    EXPECT_TRUE(limits.try_add(at(("[2001:db8::" + std::to_string(i / 2 + 1) + "]:1").c_str())));
  EXPECT_FALSE(limits.try_add(at("[2001:db8::ff]:1")));
  EXPECT_TRUE(limits.try_add(at("[2001:db8:0:1::1]:1")));
}

TEST(SourceLimits, IPv4PeersOfADualStackSocketAreCappedByTheirOwnNetwork) {
  SourceLimits limits(1);
  // Nine networks of IPv4-mapped addresses: each its own /24, not one shared /64.
  for (int net = 1; net <= 9; ++net)
    for (int host = 1; host <= 4; ++host)
      EXPECT_TRUE(
          limits.try_add(at(("[::ffff:10.0." + std::to_string(net) + "." + std::to_string(host) + "]:1").c_str())));
  EXPECT_FALSE(limits.try_add(at("[::ffff:10.0.1.5]:1")));
}

TEST(SourceLimits, ZeroMeansNoLimit) {
  SourceLimits limits(0);
  for (int i = 0; i < 1000; ++i) EXPECT_TRUE(limits.try_add(at("127.0.0.1:1")));
}

// A session whose peer's address changed counts under the new one: a new port of a full address
// fits; an address at its limit refuses it, and the session stays counted where it was.
TEST(SourceLimits, AMovedSessionCountsUnderItsNewAddress) {
  SourceLimits limits(1);
  const auto a1 = net::Address::parse("10.0.0.1:1"), a2 = net::Address::parse("10.0.0.1:2");
  const auto b = net::Address::parse("10.0.1.1:1");
  ASSERT_TRUE(limits.try_add(a1));
  ASSERT_TRUE(limits.try_add(b));
  EXPECT_TRUE(limits.move(a1, a2)) << "the same address, another port";
  EXPECT_FALSE(limits.has_room(a1));
  EXPECT_FALSE(limits.move(a2, b)) << "b holds its one session";
  EXPECT_FALSE(limits.has_room(a2)) << "still counted under a";
  limits.remove(b);
  EXPECT_TRUE(limits.move(a2, b));
  EXPECT_TRUE(limits.has_room(a1));
  EXPECT_FALSE(limits.has_room(b));
}

}  // namespace
}  // namespace ncast::server
