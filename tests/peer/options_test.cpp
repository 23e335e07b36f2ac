// ncast-peer's options.
#include "peer/options.hpp"

#include <gtest/gtest.h>

namespace ncast::peer {
namespace {

ParsedPeerOptions parse(std::vector<const char*> args) {
  args.insert(args.begin(), "ncast-peer");
  return parse_peer_options(static_cast<int>(args.size()), args.data());
}

TEST(PeerOptions, Values) {
  auto p = parse({"-s", "127.0.0.1:9000", "--server", "127.0.0.1:9001", "--stream", "movie", "-o", "-", "--loss", "0.2",
                  "--start", "live", "--max-rate", "20M", "--relay", "127.0.0.1:0", "--progress", "off"});
  const auto& o = p.options;
  ASSERT_EQ(o.servers.size(), 2u);
  EXPECT_EQ(o.servers[1].port, 9001);
  EXPECT_EQ(o.output, "-");
  EXPECT_TRUE(o.live_edge);
  EXPECT_DOUBLE_EQ(o.loss, 0.2);
  EXPECT_DOUBLE_EQ(o.max_rate, 20e6);
  ASSERT_TRUE(o.relay);
  EXPECT_FALSE(o.progress);
  EXPECT_TRUE(o.download);
  EXPECT_EQ(o.decoder, DecoderChoice::cpu);  // the GPU only when asked
  EXPECT_EQ(o.relay_memory, std::uint64_t{64} << 20);
}

// A live stream is joined at its edge unless a segment is named (a file starts at 0 either way).
TEST(PeerOptions, StartsAtTheLiveEdgeByDefault) {
  EXPECT_TRUE(parse({"-s", "127.0.0.1:1", "--stream", "x"}).options.live_edge);
  const auto o = parse({"-s", "127.0.0.1:1", "--stream", "x", "--start", "0"}).options;
  EXPECT_FALSE(o.live_edge);
  EXPECT_EQ(o.start_segment, 0u);
  EXPECT_EQ(parse({"-s", "127.0.0.1:1", "--stream", "x", "--start", "12"}).options.start_segment, 12u);
}

TEST(PeerOptions, DecoderAndRelayMemory) {
  const auto gpu = parse({"-s", "127.0.0.1:1", "--stream", "x", "--decoder", "gpu", "--relay-memory-mb", "3"}).options;
  EXPECT_EQ(gpu.decoder, DecoderChoice::gpu);
  EXPECT_EQ(gpu.relay_memory, std::uint64_t{3} << 20);
  EXPECT_EQ(parse({"-s", "127.0.0.1:1", "--stream", "x", "--decoder", "auto"}).options.decoder,
            DecoderChoice::automatic);
  EXPECT_EQ(parse({"-s", "127.0.0.1:1", "--stream", "x", "--relay-memory-mb", "0"}).options.relay_memory, 0u);
}

TEST(PeerOptions, OriginKey) {
  const std::string key(64, 'c');
  const auto o = parse({"-s", "127.0.0.1:1", "--stream", "x", "--origin-key", key.c_str()}).options;
  ASSERT_TRUE(o.origin_key);
  EXPECT_EQ(proto::to_hex(*o.origin_key), key);
  EXPECT_FALSE(o.server_key);
  EXPECT_FALSE(parse({"-s", "127.0.0.1:1", "--stream", "x"}).options.origin_key);
}

TEST(PeerOptions, BadValues) {
  const std::string short_key(62, 'a');
  for (auto args : std::vector<std::vector<const char*>>{
           {"--stream", "x"},
           {"-s", "127.0.0.1:1"},
           {"-s", "nohost", "--stream", "x"},
           {"-s", "127.0.0.1:1", "-s", "[::1]:2", "--stream", "x"},
           {"-s", "127.0.0.1:1", "--stream", "x", "--loss", "1"},
           {"-s", "127.0.0.1:1", "--stream", "x", "--window", "0"},
           {"-s", "127.0.0.1:1", "--stream", "x", "--start", "soon"},
           {"-s", "127.0.0.1:1", "--stream", "x", "--server-key", "abcd"},
           {"-s", "127.0.0.1:1", "--stream", "x", "--origin-key", short_key.c_str()},
           {"-s", "127.0.0.1:1", "--stream", "x", "--origin-key", "zz"},
           {"-s", "127.0.0.1:1", "--stream", "x", "--progress", "maybe"},
           {"-s", "127.0.0.1:1", "--stream", "x", "--decoder", "cuda"},
           {"-s", "127.0.0.1:1", "--stream", "x", "--relay-memory-mb", "-1"},
       })
    EXPECT_THROW(parse(args), std::invalid_argument);
  EXPECT_EQ(parse({"--help"}).action, cli::Action::help);
}

}  // namespace
}  // namespace ncast::peer
