// ncast-peer's options as real processes: host names in addresses (a server listening on
// localhost:0, fetched from with -s localhost:PORT; a name that does not resolve is named);
// --server-key (the server's key fetches; another key fails within a second, naming both); --decoder
// gpu without a usable CUDA device (none built, or none visible) fails at once with a clear message;
// auto then decodes on the CPU; a relay over a long stream keeps no more decoded segments than
// --relay-memory-mb allows and still feeds its downstream peer.
#include <gtest/gtest.h>

#include <cstdlib>

#include "tests/e2e/e2e_support.hpp"

namespace ncast::e2e {
namespace {

std::string addr(std::uint16_t port) { return "127.0.0.1:" + std::to_string(port); }

TEST(PeerAddresses, HostNamesResolve) {
  TempDir dir;
  const auto media = random_bytes(100'000, 30);
  write_file(dir / "m", media);
  auto server = start_server(dir, "server", {"--file", (dir / "m").string(), "--stats-interval", "0"}, "localhost:0");
  const std::string local = "localhost:" + std::to_string(server.port);
  auto peer = start_peer(dir, "peer", {"-s", local, "--stream", "m", "-o", (dir / "m.out").string()});
  const auto r = finish(*peer);
  EXPECT_EQ(r.code, 0) << r.report.dump();
  EXPECT_EQ(read_bytes(dir / "m.out"), media);

  auto unknown = start_peer(dir, "unknown", {"-s", "nosuch.invalid:7700", "--stream", "m"});
  EXPECT_EQ(unknown->wait(10s), 2);
  EXPECT_NE(unknown->err().find("--server 'nosuch.invalid:7700': cannot resolve 'nosuch.invalid'"), std::string::npos)
      << unknown->err();
}

TEST(PeerServerKey, AnotherKeyFailsAtOnceNamingBoth) {
  TempDir dir;
  const auto media = random_bytes(100'000, 33);
  write_file(dir / "m", media);
  auto server = start_server(dir, "server", {"--file", (dir / "m").string(), "--stats-interval", "0"});
  const std::string identity = server.listening["identity"];
  auto pinned =
      start_peer(dir, "pinned",
                 {"-s", addr(server.port), "--stream", "m", "-o", (dir / "m.out").string(), "--server-key", identity});
  const auto ok = finish(*pinned);
  EXPECT_EQ(ok.code, 0) << ok.report.dump();
  EXPECT_EQ(read_bytes(dir / "m.out"), media);

  const std::string other(64, 'a');
  const auto started = std::chrono::steady_clock::now();
  auto wrong = start_peer(dir, "wrong", {"-s", addr(server.port), "--stream", "m", "--server-key", other});
  const auto r = finish(*wrong);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 1s) << "the mismatch is not waited out";
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.report["failure"].get<std::string>(),
            addr(server.port) + ": server identity mismatch: expected " + other + ", got " + identity)
      << r.report.dump();
}

TEST(PeerDecoder, GpuWithoutADeviceFailsClearlyAndAutoUsesTheCpu) {
  TempDir dir;
  const auto media = random_bytes(200'000, 31);
  write_file(dir / "m", media);
  auto server = start_server(dir, "server", {"--file", (dir / "m").string(), "--stats-interval", "0"});
  NoCudaDevice hidden;
  auto gpu = start_peer(
      dir, "gpu", {"-s", addr(server.port), "--stream", "m", "-o", (dir / "gpu.out").string(), "--decoder", "gpu"});
  const auto code = gpu->wait(10s);
  ASSERT_TRUE(code) << "--decoder gpu without a device must not run";
  EXPECT_EQ(*code, 1);
  // "this ncast-peer was built without CUDA" or "no usable CUDA device: …"
  EXPECT_NE(gpu->err().find("ncast-peer: --decoder gpu: "), std::string::npos) << gpu->err();
  EXPECT_NE(gpu->err().find("CUDA"), std::string::npos) << gpu->err();
  EXPECT_FALSE(std::filesystem::exists(dir / "gpu.out")) << "nothing is created before the decoder is known";

  auto automatic = start_peer(
      dir, "auto", {"-s", addr(server.port), "--stream", "m", "-o", (dir / "auto.out").string(), "--decoder", "auto"});
  const auto r = finish(*automatic);
  EXPECT_EQ(r.code, 0) << r.report.dump();
  EXPECT_EQ(read_bytes(dir / "auto.out"), media);
  EXPECT_EQ(r.report["decoder"].get<std::string>().rfind("cpu ", 0), 0u) << r.report.dump();

  auto bad = start_peer(dir, "bad", {"-s", addr(server.port), "--stream", "m", "--decoder", "fpga"});
  EXPECT_EQ(bad->wait(10s), 2);
  EXPECT_NE(bad->err().find("--decoder must be cpu, gpu or auto"), std::string::npos) << bad->err();
}

TEST(RelayMemory, ARelayOverALongStreamKeepsItsBudgetAndFeedsItsPeer) {
  TempDir dir;
  // 64 segments of 32 KiB; the relay may keep 1 MiB of them (31, at 33 KiB each with their rows). It
  // pulls at 8 Mbit/s, so its downstream peer keeps up with it, well within what it keeps.
  const auto media = random_bytes(64 * 32 * 1024 - 5000, 32);
  write_file(dir / "long", media);
  auto server = start_server(
      dir, "server",
      {"--file", (dir / "long").string(), "--symbols", "32", "--symbol-size", "1024", "--stats-interval", "0"});
  auto relay = start_peer(dir, "relay",
                          {"-s", addr(server.port), "--stream", "long", "-o", (dir / "relay.out").string(), "--relay",
                           "127.0.0.1:0", "--relay-memory-mb", "1", "--max-rate", "8M"});
  const auto ev = relay->wait_event("relay", 10s, true);
  ASSERT_TRUE(ev) << relay->err();
  auto sink =
      start_peer(dir, "sink",
                 {"-s", addr((*ev)["port"].get<std::uint16_t>()), "--stream", "long", "-o", (dir / "sink.out").string(),
                  "--loss", "0.05", "--origin-key", server.listening["identity"].get<std::string>()});
  const auto rs = finish(*sink);
  EXPECT_EQ(rs.code, 0) << rs.report.dump() << "\nrelay: " << relay->err();
  EXPECT_EQ(read_bytes(dir / "sink.out"), media);
  const auto rr = finish(*relay);
  EXPECT_EQ(rr.code, 0) << rr.report.dump();
  EXPECT_EQ(read_bytes(dir / "relay.out"), media);
  const Json& kept = rr.report["relay"];
  EXPECT_LE(kept["kept_peak_bytes"].get<double>(), 1 << 20) << kept.dump();
  EXPECT_GT(kept["kept_peak_bytes"].get<double>(), 900'000) << "the budget was used: " << kept.dump();
  EXPECT_GE(kept["evicted"].get<int>(), 64 - 31) << kept.dump();
  EXPECT_GE(kept["recoded"].get<int>(), 64 * 32) << kept.dump();
}

}  // namespace
}  // namespace ncast::e2e
