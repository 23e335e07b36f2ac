// Retry tokens: valid only for the address, port and nonce they were minted for, within their lifetime,
// under the key that minted them; every altered octet fails.
#include "protocol/token.hpp"

#include <gtest/gtest.h>

#include "protocol/crypto.hpp"
#include "tests/protocol/test_util.hpp"

namespace ncast::proto {
namespace {

class TokenTest : public ::testing::Test {
 protected:
  TokenTest() {
    addr = net::Address::parse("127.0.0.1:40000");
    addr6 = net::Address::parse("[::1]:40000");
    for (auto& b : nonce) b = static_cast<std::uint8_t>(rng());
  }
  std::mt19937_64 rng{42};
  TokenMinter minter{30};
  net::Address addr, addr6;
  Nonce nonce{};
};

TEST_F(TokenTest, ValidWithinLifetime) {
  const auto t = minter.mint(addr, nonce, 1000);
  EXPECT_TRUE(minter.verify(t, addr, nonce, 1000));
  EXPECT_TRUE(minter.verify(t, addr, nonce, 1030));
  EXPECT_FALSE(minter.verify(t, addr, nonce, 1031));  // expired
  EXPECT_FALSE(minter.verify(t, addr, nonce, 999));   // from the future
}

TEST_F(TokenTest, BoundToAddressPortNonceAndFamily) {
  const auto t = minter.mint(addr, nonce, 5);
  auto other_port = addr;
  other_port.port += 1;
  EXPECT_FALSE(minter.verify(t, other_port, nonce, 5));
  EXPECT_FALSE(minter.verify(t, net::Address::parse("127.0.0.2:40000"), nonce, 5));
  EXPECT_FALSE(minter.verify(t, addr6, nonce, 5));
  auto other_nonce = nonce;
  other_nonce[15] ^= 1;
  EXPECT_FALSE(minter.verify(t, addr, other_nonce, 5));
  const auto t6 = minter.mint(addr6, nonce, 5);
  EXPECT_TRUE(minter.verify(t6, addr6, nonce, 5));
  EXPECT_FALSE(minter.verify(t6, addr, nonce, 5));
}

TEST_F(TokenTest, EveryOctetMattersAndLengthIsExact) {
  const auto t = minter.mint(addr, nonce, 77);
  for (std::size_t i = 0; i < t.size(); ++i)
    for (std::uint8_t bit : {1, 0x80}) {
      auto bad = t;
      bad[i] ^= bit;
      EXPECT_FALSE(minter.verify(bad, addr, nonce, 77)) << "octet " << i;
    }
  std::vector<std::uint8_t> longer(t.begin(), t.end());
  longer.push_back(0);
  EXPECT_FALSE(minter.verify(longer, addr, nonce, 77));
  EXPECT_FALSE(minter.verify(std::span(t).first(19), addr, nonce, 77));
  EXPECT_FALSE(minter.verify({}, addr, nonce, 77));
}

TEST_F(TokenTest, OtherKeyFailsAndMacMatchesIndependentHmac) {
  const auto t = minter.mint(addr, nonce, 9);
  EXPECT_FALSE(TokenMinter(30).verify(t, addr, nonce, 9));

  // The documented construction, computed here from its definition.
  std::array<std::uint8_t, 32> key{};
  for (auto& b : key) b = static_cast<std::uint8_t>(rng());
  TokenMinter fixed(key, 30);
  const auto token = fixed.mint(addr, nonce, 0x01020304);
  std::vector<std::uint8_t> input;
  const std::string label = "ncast token v1";
  input.insert(input.end(), label.begin(), label.end());
  input.insert(input.end(), {1, 2, 3, 4, 4, 127, 0, 0, 1, 0x9C, 0x40});
  input.insert(input.end(), nonce.begin(), nonce.end());
  const auto mac = hmac_sha256(key, input);
  EXPECT_EQ(to_hex(token), "01020304" + to_hex(std::span(mac).first(16)));
}

TEST_F(TokenTest, ClockWrapStillWorks) {
  const auto t = minter.mint(addr, nonce, 0xFFFFFFF0u);
  EXPECT_TRUE(minter.verify(t, addr, nonce, 0x00000005u));  // 21 s later across the wrap
}

}  // namespace
}  // namespace ncast::proto
