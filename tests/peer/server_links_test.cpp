// ServerLinks: one link per server with equal shares (the first also the source symbols) and the
// options every link shares; lookup by address; the all-failed check and its message.
#include "peer/server_links.hpp"

#include <gtest/gtest.h>

namespace ncast::peer {
namespace {

std::vector<net::Address> servers(int count) {
  std::vector<net::Address> out;
  for (int i = 0; i < count; ++i) out.push_back(net::Address::parse("127.0.0.1:" + std::to_string(7000 + i)));
  return out;
}

TEST(ServerLinks, EqualSharesFirstSystematicCommonOptions) {
  StreamReceiver receiver({}, [](std::span<const std::uint8_t>) {});
  LinkOptions common;
  common.stream = "movie";
  common.window = 12;
  common.systematic = false;
  common.share = 1;
  for (const int k : {1, 3, 7}) {
    ServerLinks links(servers(k), common, receiver);
    ASSERT_EQ(links.size(), static_cast<std::size_t>(k));
    std::uint32_t total = 0;
    for (std::size_t i = 0; i < links.size(); ++i) {
      const LinkOptions& o = links[i].options();
      EXPECT_EQ(o.server, servers(k)[i]);
      EXPECT_EQ(o.systematic, i == 0);
      EXPECT_EQ(o.stream, "movie");
      EXPECT_EQ(o.window, 12);
      EXPECT_LE(o.share, proto::kFullShare / k + 1);
      EXPECT_GE(o.share, proto::kFullShare / k);
      total += o.share;
    }
    EXPECT_EQ(total, proto::kFullShare) << k << " servers";
  }
}

TEST(ServerLinks, FindAndAllFailed) {
  StreamReceiver receiver({}, [](std::span<const std::uint8_t>) {});
  ServerLinks links(servers(2), {}, receiver);
  EXPECT_EQ(links.find(servers(2)[1]), 1u);
  EXPECT_FALSE(links.find(net::Address::parse("127.0.0.1:9")));
  EXPECT_FALSE(links.address_of(5));  // no server id known before a MANIFEST
  EXPECT_FALSE(links.all_failed());
  links[0].fail("no answer");
  EXPECT_FALSE(links.all_failed());
  links[1].fail("refused");
  EXPECT_TRUE(links.all_failed());
  EXPECT_EQ(links.failures(), "127.0.0.1:7000: no answer; 127.0.0.1:7001: refused");
}

}  // namespace
}  // namespace ncast::peer
