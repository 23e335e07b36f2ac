// Floods against a real ncast-server on loopback (issue 20): a peer silent after its handshake, a
// half-open handshake flood, one address opening sessions as fast as it can beside a legitimate peer,
// replayed JOINs. Each test prints its figures ("figure: ..."); docs/security.md has them beside those of
// the server before these defences. NCAST_FLOOD_SERVER names another server binary to measure (the
// tests use no option such a server lacks, though its figures then fail the assertions).
#include <gtest/gtest.h>

#include <cstdio>
#include <iostream>

#include "e2e_support.hpp"
#include "flood_client.hpp"

namespace ncast::e2e {
namespace {

std::string server_binary() {
  const char* other = std::getenv("NCAST_FLOOD_SERVER");
  return other && *other ? other : NCAST_SERVER_BIN;
}

// A series of a scrape, 0 when absent (an older server lacks some).
double value(const std::map<std::string, double>& m, const std::string& key) {
  const auto it = m.find(key);
  return it == m.end() ? 0 : it->second;
}

// The process's user + system CPU time, seconds.
double cpu_seconds(pid_t pid) {
  std::istringstream in(read_file("/proc/" + std::to_string(pid) + "/stat"));
  std::string field;
  // Fields 14 and 15; the command name (field 2) has no spaces here.
  for (int i = 1; i < 14; ++i) in >> field;
  double user = 0, system = 0;
  in >> user >> system;
  return (user + system) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

void figure(const std::string& text) { std::cout << "figure: " << text << std::endl; }

TEST(Flood, APeerSilentAfterItsHandshakeGetsAtMostThreeTimesItsJoinAndIsFreed) {
  TempDir dir;
  write_file(dir / "m", random_bytes(4'000'000, 1));
  auto server = start_server(dir, "server", {"--file", (dir / "m").string(), "--stats-interval", "0"}, "127.0.0.1:0",
                             server_binary());
  SilentClient client("127.0.0.1", server.port, "m");
  client.hello();
  ASSERT_TRUE(client.wait_manifest(2s));
  const auto start = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - start < 4s) client.wait_manifest(100ms);  // reads, says nothing
  figure("silent peer: JOIN " + std::to_string(client.join_bytes) + " B, got " + std::to_string(client.session_bytes) +
         " B (MANIFEST and after) in 4 s");
  EXPECT_LE(client.session_bytes, 3 * client.join_bytes);
  const auto m = scrape(server.metrics);
  EXPECT_EQ(value(m, "ncast_sessions"), 0) << "freed by the handshake timeout (3 s), not the idle one (10 s)";
  EXPECT_EQ(value(m, "ncast_sessions_closed_total{reason=\"handshake\"}"), 1);
}

// 500 ports (on 500 addresses in 100 networks, so that no per-source limit is what stops them) start
// handshakes at 2,000 HELLOs per second for 5 s, answer every RETRY and never acknowledge a MANIFEST.
TEST(Flood, AHalfOpenFloodDrawsAtMostThreeTimesItsBytes) {
  TempDir dir;
  write_file(dir / "m", random_bytes(4'000'000, 2));
  auto server = start_server(dir, "server", {"--file", (dir / "m").string(), "--stats-interval", "0"}, "127.0.0.1:0",
                             server_binary());
  std::vector<std::string> ips;
  for (int i = 0; i < 500; ++i)
    ips.push_back("127." + std::to_string(10 + i % 100) + "." + std::to_string(i / 100) + ".1");
  const double cpu_before = cpu_seconds(server.process->pid());
  HandshakeFlood flood(ips, server.port, "m", 2000);
  std::this_thread::sleep_for(5s);
  const double cpu = cpu_seconds(server.process->pid()) - cpu_before;
  std::this_thread::sleep_for(500ms);  // what is still on its way
  flood.stop();
  const auto m = scrape(server.metrics);
  figure("half-open flood, 5 s: " + std::to_string(flood.hellos()) + " HELLOs, clients sent " +
         std::to_string(flood.sent()) + " B, got " + std::to_string(flood.received()) + " B (" +
         std::to_string(flood.manifests()) + " MANIFESTs); server sent " +
         std::to_string(value(m, "ncast_sent_bytes_total")) + " B, CPU " + std::to_string(100 * cpu / 5) + " %");
  EXPECT_GT(flood.manifests(), 1000u) << "the flood made sessions";
  EXPECT_LE(flood.received(), 3 * flood.sent());
  EXPECT_LE(value(m, "ncast_sent_bytes_total"), 3 * value(m, "ncast_received_bytes_total"));
}

// Download time of a 1 MB stream by a real ncast-peer from 127.0.0.1.
double peer_seconds(const TempDir& dir, const std::string& tag, std::uint16_t port) {
  const auto start = std::chrono::steady_clock::now();
  auto peer =
      start_peer(dir, tag, {"-s", "127.0.0.1:" + std::to_string(port), "--stream", "m", "-o", (dir / tag).string()});
  const auto r = finish(*peer);
  EXPECT_EQ(r.code, 0) << peer->err();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// One address (127.0.2.1, 64 ports) opens sessions as fast as the server lets it, acknowledging each
// MANIFEST so that they last; with --max-sessions 100, a peer from another address is not locked out.
TEST(Flood, OneAddressHoldsAtMostItsShareAndOthersStillJoin) {
  TempDir dir;
  const auto media = random_bytes(1'000'000, 3);
  write_file(dir / "m", media);
  auto server =
      start_server(dir, "server", {"--file", (dir / "m").string(), "--stats-interval", "0", "--max-sessions", "100"},
                   "127.0.0.1:0", server_binary());
  const double alone = peer_seconds(dir, "alone", server.port);

  HandshakeFlood flood(std::vector<std::string>(64, "127.0.2.1"), server.port, "m", 2000, true);
  std::this_thread::sleep_for(1s);
  double most = 0;
  const double during = peer_seconds(dir, "during", server.port);
  for (const auto end = std::chrono::steady_clock::now() + 2s; std::chrono::steady_clock::now() < end;)
    most = std::max(most, value(scrape(server.metrics), "ncast_sessions"));
  flood.stop();
  const auto m = scrape(server.metrics);
  figure("single-source flood, 64 ports at 2,000 HELLO/s for ~" + std::to_string(3 + during) +
         " s: " + std::to_string(value(m, "ncast_sessions_created_total")) + " sessions created, at most " +
         std::to_string(most) + " open; a peer from 127.0.0.1 took " + std::to_string(during) + " s (alone " +
         std::to_string(alone) + " s)");
  EXPECT_EQ(read_bytes(dir / "during"), media);
  EXPECT_LE(most, 16 + 1) << "the flooding address's 16 and the sampling moment's peer";
  EXPECT_LE(during, 2 * alone + 0.2) << "0.2 s: process start-up jitter on a loaded host";
}

// Replays of one JOIN: the MANIFEST comes back at most once per retransmission timeout and only for
// its own stream's JOIN; after a BYE the JOIN opens nothing.
TEST(Flood, ReplayedJoinsAreAnsweredSparinglyAndNotAfterABye) {
  TempDir dir;
  write_file(dir / "m", random_bytes(100'000, 4));
  const std::string long_name(200, 'x');
  write_file(dir / long_name, random_bytes(100'000, 5));
  auto server = start_server(
      dir, "server", {"--file", (dir / "m").string(), "--file", (dir / long_name).string(), "--stats-interval", "0"},
      "127.0.0.1:0", server_binary());
  SilentClient client("127.0.0.1", server.port, long_name);
  client.hello();
  ASSERT_TRUE(client.wait_manifest(2s));
  // The same nonce and token, another stream: a short JOIN.
  auto join = *proto::decode_join(client.join());
  join.stream = "m";
  const auto short_join = proto::encode(join);
  const std::size_t before = client.received, sent_before = client.sent;
  for (int i = 0; i < 1000; ++i) client.send(i % 2 ? short_join : client.join());
  client.wait_manifest(300ms);
  const std::size_t replies = client.manifests - 1, back = client.received - before;
  figure("1,000 replayed JOINs (" + std::to_string(client.sent - sent_before) +
         " B) within ~0.3 s: " + std::to_string(replies) + " MANIFESTs, " + std::to_string(back) + " B back");
  EXPECT_LE(replies, 10u);
  EXPECT_LE(back, 3 * (client.sent - sent_before));

  client.ack();
  client.bye();
  std::this_thread::sleep_for(100ms);
  client.send(client.join());
  std::this_thread::sleep_for(200ms);
  const auto m = scrape(server.metrics);
  EXPECT_EQ(value(m, "ncast_sessions_created_total"), 1) << "the JOIN of a closed session opened another";
  EXPECT_EQ(value(m, "ncast_sessions"), 0);
}

}  // namespace
}  // namespace ncast::e2e
