// ncast-peer's output file as real processes: the stream is written under a temporary name beside the
// output and takes the output's name only when complete; SIGINT or SIGTERM mid-transfer exits 130 and
// leaves neither; an existing file is refused up front and left as it was, or with --force kept until
// the new one is complete.
#include <gtest/gtest.h>

#include <csignal>

#include "tests/e2e/e2e_support.hpp"

namespace ncast::e2e {
namespace {

std::string addr(std::uint16_t port) { return "127.0.0.1:" + std::to_string(port); }

// The files of dir whose names end in ".part": a peer's temporary output.
std::vector<std::filesystem::path> partial_files(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> out;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".part") out.push_back(e.path());
  return out;
}

// Waits (at most 10 s) until a temporary output holds data; returns it, or empty if none did.
std::filesystem::path partial_with_data(const std::filesystem::path& dir) {
  for (const auto end = std::chrono::steady_clock::now() + 10s; std::chrono::steady_clock::now() < end;) {
    for (const auto& p : partial_files(dir)) {
      std::error_code ec;
      if (std::filesystem::file_size(p, ec) > 0 && !ec) return p;
    }
    std::this_thread::sleep_for(10ms);
  }
  return {};
}

class PeerOutput : public ::testing::Test {
 protected:
  void SetUp() override {
    write_file(dir_ / "m", media_);
    server_ = start_server(dir_, "server", {"--file", (dir_ / "m").string(), "--stats-interval", "0"});
  }
  // A peer slowed to about 4 s for the stream, so that it can be caught mid-transfer.
  std::unique_ptr<Process> slow_peer(const std::string& tag, const std::filesystem::path& out,
                                     std::vector<std::string> more = {}) {
    std::vector<std::string> args{"-s", addr(server_.port), "--stream", "m", "-o", out.string(), "--max-rate", "2M"};
    args.insert(args.end(), more.begin(), more.end());
    return start_peer(dir_, tag, args);
  }

  TempDir dir_;
  const std::vector<std::uint8_t> media_ = random_bytes(1'000'000, 40);
  ServerProc server_;
};

TEST_F(PeerOutput, AnInterruptedPeerExits130AndLeavesNoOutput) {
  for (const int sig : {SIGINT, SIGTERM}) {
    const auto out = dir_ / ("out" + std::to_string(sig));
    auto peer = slow_peer("peer" + std::to_string(sig), out);
    ASSERT_FALSE(partial_with_data(dir_.path()).empty()) << peer->err();
    EXPECT_FALSE(std::filesystem::exists(out)) << "the output's name is taken only when complete";
    peer->signal(sig);
    EXPECT_EQ(peer->wait(5s), 130) << "signal " << sig << ": " << peer->err();
    EXPECT_FALSE(std::filesystem::exists(out)) << "signal " << sig;
    EXPECT_TRUE(partial_files(dir_.path()).empty()) << "signal " << sig << ": the temporary file is left";
  }
}

TEST_F(PeerOutput, AnExistingFileIsRefusedOrReplacedOnlyWhenComplete) {
  const auto out = dir_ / "out";
  write_file(out, {'o', 'l', 'd'});
  auto refused = slow_peer("refused", out);
  EXPECT_EQ(refused->wait(10s), 1);
  EXPECT_NE(refused->err().find("cannot create " + out.string() + ": File exists (use --force to overwrite)"),
            std::string::npos)
      << refused->err();
  EXPECT_EQ(read_file(out), "old");
  EXPECT_TRUE(partial_files(dir_.path()).empty());

  auto forced = slow_peer("forced", out, {"--force"});
  ASSERT_FALSE(partial_with_data(dir_.path()).empty()) << forced->err();
  EXPECT_EQ(read_file(out), "old") << "replaced before the stream was complete";
  const auto r = finish(*forced);
  EXPECT_EQ(r.code, 0) << r.report.dump();
  EXPECT_EQ(read_bytes(out), media_);
  EXPECT_TRUE(partial_files(dir_.path()).empty());
}

}  // namespace
}  // namespace ncast::e2e
