// Address parsing, printing and sockaddr round trips.
#include "net/address.hpp"

#include <gtest/gtest.h>
#include <sys/socket.h>

namespace ncast::net {
namespace {

TEST(Address, ParsePrintAndSockaddr) {
  for (const char* text : {"127.0.0.1:9000", "[::1]:65535", "10.1.2.3:0", "[fe80::1]:7"}) {
    const auto a = Address::parse(text);
    ASSERT_NE(a.family, 0) << text;
    EXPECT_EQ(a.to_string(), text);
    sockaddr_storage ss{};
    a.to_sockaddr(ss);
    EXPECT_EQ(Address::from_sockaddr(reinterpret_cast<sockaddr*>(&ss)), a);
  }
  for (const char* bad :
       {"", "127.0.0.1", "127.0.0.1:", "127.0.0.1:65536", "localhost:80", "[::1:80", "[::1]80", "1.2.3.4:8a", "::1:80"})
    EXPECT_EQ(Address::parse(bad).family, 0) << bad;
  EXPECT_TRUE(Address::parse("127.5.0.1:1").is_loopback());
  EXPECT_TRUE(Address::parse("[::1]:1").is_loopback());
  EXPECT_TRUE(Address::parse("[::ffff:127.0.0.1]:1").is_loopback());
  EXPECT_FALSE(Address::parse("10.0.0.1:1").is_loopback());
  EXPECT_FALSE(Address::parse("[::2]:1").is_loopback());
  AddressHash h;
  EXPECT_NE(h(Address::parse("127.0.0.1:1")), h(Address::parse("127.0.0.1:2")));
}

}  // namespace
}  // namespace ncast::net
