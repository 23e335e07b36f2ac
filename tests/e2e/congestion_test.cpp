// Congestion control end to end on 127.0.0.1 (issue 16): a paced session whose path carries too little
// of its stream is ended by the server's circuit breaker with the path-too-slow BYE, which the peer
// prints and exits on; a download's rate and RTT estimates reach /metrics. The bottleneck, fairness
// and blackhole cases need the emulated network of tools/netbed.sh.
#include <gtest/gtest.h>

#include "tests/e2e/e2e_support.hpp"

namespace ncast::e2e {
namespace {

std::string addr(std::uint16_t port) { return "127.0.0.1:" + std::to_string(port); }

TEST(Congestion, APathTooSlowForAPacedStreamEndsItWithTheBye) {
  TempDir dir;
  write_file(dir / "movie.bin", random_bytes(16'000'000, 3));  // 16 s: the breaker trips within 10 bad seconds
  auto server =
      start_server(dir, "server", {"--file", (dir / "movie.bin").string(), "--bitrate", "8M", "--stats-interval", "0"});
  // 65 % of what arrives is lost: the session makes up for half at most, so the peer receives about
  // 0.35 / 0.5 of the bitrate, then less as the breaker backs off.
  auto peer = start_peer(
      dir, "peer", {"-s", addr(server.port), "--stream", "movie.bin", "--paced", "--loss", "0.65", "--seed", "5"});
  const auto r = finish(*peer, 40s);
  EXPECT_EQ(r.code, 1) << r.report.dump();
  EXPECT_FALSE(r.report["complete"].get<bool>());
  const std::string failure = r.report["failure"].get<std::string>();
  EXPECT_NE(failure.find("path too slow for this stream: measured "), std::string::npos) << failure;
  EXPECT_NE(failure.find(" of 8000 kbit/s"), std::string::npos) << failure;
  // At 65 % loss a stall may start a second session before the breaker ends one; a BYE that arrives
  // ends the peer, so no session is opened after it.
  const auto m = scrape(server.metrics);
  EXPECT_GE(m.at("ncast_circuit_breaker_trips_total"), 1.0);
  EXPECT_EQ(m.at("ncast_sessions_closed_total{reason=\"path_too_slow\"}"), m.at("ncast_circuit_breaker_trips_total"));
  EXPECT_EQ(m.at("ncast_sessions"), 0.0);
}

TEST(Congestion, APacedStreamThatThePathCarriesKeepsItsSession) {
  TempDir dir;
  const auto media = random_bytes(3'000'000, 4);
  write_file(dir / "movie.bin", media);
  auto server =
      start_server(dir, "server", {"--file", (dir / "movie.bin").string(), "--bitrate", "8M", "--stats-interval", "0"});
  auto peer = start_peer(dir, "peer",
                         {"-s", addr(server.port), "--stream", "movie.bin", "--paced", "--loss", "0.2", "--seed", "6",
                          "-o", (dir / "out").string()});
  const auto r = finish(*peer, 40s);
  EXPECT_EQ(r.code, 0) << r.report.dump();
  EXPECT_EQ(read_bytes(dir / "out"), media);
  const auto m = scrape(server.metrics);
  EXPECT_EQ(m.at("ncast_circuit_breaker_trips_total"), 0.0);
  // Sampled once a second from every session with an RTT: the 3 s stream gave a few samples.
  EXPECT_GE(m.at("ncast_session_rtt_seconds_count"), 1.0);
  EXPECT_GE(m.at("ncast_session_rate_bits_count"), 1.0);
  EXPECT_GT(m.at("ncast_session_rate_bits_sum"), 0.0);
}

}  // namespace
}  // namespace ncast::e2e
