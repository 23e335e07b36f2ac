// Pollution end to end: a server whose packets are all well-formed and authenticated but some of whose
// coded symbols lie (tests/e2e/polluting_server.cpp) cannot make ncast-peer write a wrong octet. The
// peer notices the segments that fail their SHA-256, decodes them again from the honest server,
// reports the liar (an event line and its report) and stops listening to it.
#include <gtest/gtest.h>

#include <algorithm>

#include "tests/e2e/e2e_support.hpp"

namespace ncast::e2e {
namespace {

std::string addr(std::uint16_t port) { return "127.0.0.1:" + std::to_string(port); }

std::vector<std::string> stream_args(const TempDir& dir, const std::string& server_id) {
  return {"--file",  (dir / "movie").string(), "--symbols", "32", "--symbol-size", "1024", "--server-id",
          server_id, "--stats-interval",       "0"};
}

TEST(Pollution, ALyingServerIsCaughtAndTheStreamArrivesIntact) {
  TempDir dir;
  const auto media = random_bytes(700'000, 21);  // 22 segments of 32 KiB
  write_file(dir / "movie", media);
  auto honest = start_server(dir, "honest", stream_args(dir, "1"));
  auto args = stream_args(dir, "66");
  args.insert(args.end(), {"--pollute", "0.1"});
  auto liar = start_server(dir, "liar", args, "127.0.0.1:0", NCAST_POLLUTER_BIN);

  // The liar is joined first, so that it also sends the source symbols.
  auto peer = start_peer(
      dir, "peer", {"-s", addr(liar.port), "-s", addr(honest.port), "--stream", "movie", "-o", (dir / "out").string()});
  const auto r = finish(*peer);
  EXPECT_EQ(r.code, 0) << r.report.dump();
  EXPECT_EQ(read_bytes(dir / "out"), media);
  EXPECT_GE(r.report["hash_failures"].get<int>(), 1) << r.report.dump();
  EXPECT_GE(r.report["recovered"].get<int>(), 1) << r.report.dump();
  ASSERT_EQ(r.report["polluters"].size(), 1u) << r.report.dump();
  const Json& p = r.report["polluters"][0];
  EXPECT_EQ(p["server_id"], 66);
  EXPECT_EQ(p["address"], addr(liar.port));
  // The liar's link was closed with its reason; the honest one finished normally.
  for (const Json& s : r.report["servers"])
    if (s["address"] == addr(liar.port)) {
      EXPECT_NE(s.value("failure", "").find("pollution"), std::string::npos) << s.dump();
    } else {
      EXPECT_FALSE(s.contains("failure")) << s.dump();
    }
  EXPECT_TRUE(peer->wait_event("polluter", 0ms, true)) << peer->err();
}

TEST(Pollution, WithOnlyALiarNothingWrongIsEverWritten) {
  TempDir dir;
  const auto media = random_bytes(300'000, 22);
  write_file(dir / "movie", media);
  auto args = stream_args(dir, "66");
  args.insert(args.end(), {"--pollute", "0.05"});
  auto liar = start_server(dir, "liar", args, "127.0.0.1:0", NCAST_POLLUTER_BIN);
  auto peer = start_peer(dir, "peer", {"-s", addr(liar.port), "--stream", "movie", "-o", (dir / "out").string()});
  const auto r = finish(*peer);
  EXPECT_EQ(r.code, 1) << r.report.dump();
  EXPECT_FALSE(r.report["complete"].get<bool>());
  EXPECT_NE(r.report.value("failure", "").find("pollution"), std::string::npos) << r.report.dump();
  ASSERT_EQ(r.report["polluters"].size(), 1u);
  // What was written is verified segments only: a prefix of the stream.
  const auto out = read_bytes(dir / "out");
  ASSERT_LE(out.size(), media.size());
  EXPECT_TRUE(std::equal(out.begin(), out.end(), media.begin()));
}

}  // namespace
}  // namespace ncast::e2e
