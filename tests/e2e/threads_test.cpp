// ncast-server --threads: one port served by four threads (SO_REUSEPORT), real ncast-peer processes on
// 127.0.0.1, paced and download sessions, some with loss. Every peer must write the file byte for byte,
// and the server's /metrics, summed over its threads, must account for every session and segment.
// The threads' counters asked for every millisecond (stats lines and /metrics) while they serve must
// not bring the server down.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "tests/e2e/e2e_support.hpp"

namespace ncast::e2e {
namespace {

TEST(Streaming, AFourThreadServerServesTwentyFourPeersByteExactly) {
  TempDir dir;
  constexpr std::size_t kBytes = 700'000;  // six segments of 128 KiB (n = 128, L = 1024)
  const auto media = random_bytes(kBytes, 41);
  write_file(dir / "show", media);
  auto server = start_server(dir, "server",
                             {"--file", (dir / "show").string(), "--threads", "4", "--bitrate", "8M",
                              "--pacing-tick-us", "1000", "--stats-interval", "0"});
  EXPECT_EQ(server.listening["threads"], 4);
  constexpr int kPeers = 24;
  std::vector<std::unique_ptr<Process>> peers;
  for (int i = 0; i < kPeers; ++i) {
    std::vector<std::string> args{
        "-s", "127.0.0.1:" + std::to_string(server.port),   "--stream", "show",
        "-o", (dir / ("out" + std::to_string(i))).string(), "--seed",   std::to_string(300 + i)};
    // Even peers play at the bitrate (paced sessions), odd ones download; every third loses 10 %.
    if (i % 2 == 0) args.push_back("--paced");
    else args.insert(args.end(), {"--max-rate", "20M"});
    if (i % 3 == 0) args.insert(args.end(), {"--loss", "0.1"});
    peers.push_back(start_peer(dir, "peer" + std::to_string(i), args));
  }
  for (int i = 0; i < kPeers; ++i) {
    const auto r = finish(*peers[i]);
    EXPECT_EQ(r.code, 0) << "peer " << i << ": " << r.report.dump() << peers[i]->err();
    EXPECT_EQ(r.report["hash_failures"], 0);
    EXPECT_EQ(read_bytes(dir / ("out" + std::to_string(i))), media) << "peer " << i;
  }
  const std::size_t segments = (kBytes + 128 * 1024 - 1) / (128 * 1024);
  const auto m = scrape_until(
      server.metrics,
      [&](const std::map<std::string, double>& x) {
        const auto it = x.find("ncast_segments_completed_total");
        return it != x.end() && it->second >= static_cast<double>(kPeers * segments);
      },
      10s);
  ASSERT_TRUE(m.count("ncast_sendmmsg_calls_total")) << "no /metrics";
  EXPECT_EQ(m.at("ncast_sessions_created_total"), kPeers);
  EXPECT_EQ(m.at("ncast_segments_completed_total"), static_cast<double>(kPeers * segments));
  // What is due at one pacing tick leaves in one sendmmsg: several packets per call on average.
  const double queued =
      m.at("ncast_sent_packets_total{type=\"coded\"}") + m.at("ncast_sent_packets_total{type=\"segments\"}");
  EXPECT_GE(queued, 2 * m.at("ncast_sendmmsg_calls_total"));
}

TEST(Streaming, ATwoThreadServerAskedForItsCountersEveryMillisecondWhileServingStaysUp) {
  TempDir dir;
  write_file(dir / "show", random_bytes(3'000'000, 43));  // twelve seconds at 2 Mbit/s
  auto server = start_server(
      dir, "server",
      {"--file", (dir / "show").string(), "--threads", "2", "--bitrate", "2M", "--stats-interval", "0.001"});
  std::vector<std::unique_ptr<Process>> peers;
  peers.reserve(12);
  for (int i = 0; i < 12; ++i)
    peers.push_back(start_peer(dir, "peer" + std::to_string(i),
                               {"-s", "127.0.0.1:" + std::to_string(server.port), "--stream", "show", "-o",
                                (dir / ("out" + std::to_string(i))).string(), "--paced", "--loss", "0.2"}));
  // Scrapes from several threads at once, and threads that only burn CPU: on a loaded machine a server
  // thread is preempted anywhere, also between answering and leaving the handler.
  std::atomic<int> answered{0};
  std::atomic<bool> busy{true};
  std::vector<std::thread> load;
  load.reserve(4);
  for (int i = 0; i < 4; ++i)
    load.emplace_back([&, scrape = i % 2 == 0] {
      while (busy)
        if (scrape && metrics_body(server.metrics)) ++answered;
    });
  std::this_thread::sleep_for(6s);
  busy = false;
  for (auto& t : load) t.join();
  EXPECT_GT(answered, 0);
  ASSERT_FALSE(server.process->wait(0ms)) << "the server died: " << server.process->err();
  server.process->signal(SIGTERM);
  EXPECT_EQ(server.process->wait(20s), 0) << server.process->err();
  EXPECT_TRUE(server.process->wait_event("stopped", 1s));
  EXPECT_EQ(server.process->err(), "");
}

}  // namespace
}  // namespace ncast::e2e
