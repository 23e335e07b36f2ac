#include "protocol/cmac.hpp"

#include <gtest/gtest.h>

#include "test_util.hpp"

namespace ncast::proto {
namespace {

using testing::hex;

// RFC 4493 section 4: the four examples, on both engines.
class CmacTest : public ::testing::TestWithParam<Cmac::Engine> {};

TEST_P(CmacTest, Rfc4493Examples) {
  const auto key = hex("2b7e151628aed2a6abf7158809cf4f3c");
  const Cmac mac(std::span<const std::uint8_t, 16>(key.data(), 16), GetParam());
  const auto message = hex(
      "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e5130c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b"
      "17ad2b417be66c3710");
  const std::pair<std::size_t, const char*> examples[] = {{0, "bb1d6929e95937287fa37d129b756746"},
                                                          {16, "070a16b46b4d4144f79bdd9dd04a287c"},
                                                          {40, "dfa66747de9ae63030ca32611497c827"},
                                                          {64, "51f0bebf7e3b9d92fc49741779363cfe"}};
  for (const auto& [len, tag] : examples) {
    const auto m = std::span<const std::uint8_t>(message).first(len);
    const Block got = mac.mac(m);
    EXPECT_EQ(to_hex(got), tag) << len << " octets";
    // Split anywhere between the two spans, the MAC is that of their concatenation.
    for (std::size_t cut = 0; cut <= len; cut += 7) EXPECT_EQ(mac.mac(m.first(cut), m.subspan(cut)), got);
  }
}

INSTANTIATE_TEST_SUITE_P(Engines, CmacTest, ::testing::Values(Cmac::Engine::automatic, Cmac::Engine::openssl));

TEST(Cmac, OpensslEngineIsNotHardware) {
  const std::array<std::uint8_t, 16> key{};
  EXPECT_FALSE(Cmac(key, Cmac::Engine::openssl).hardware());
}

}  // namespace
}  // namespace ncast::proto
