// ncast-server's start-up errors as an operator meets them: a UDP port or a /metrics port already taken
// and a missing configuration file are refused with a non-zero exit and a message naming the address
// or the file.
#include <gtest/gtest.h>

#include "tests/e2e/e2e_support.hpp"

namespace ncast::e2e {
namespace {

// Runs ncast-server with args; its exit status and standard error (it must exit within 10 s).
std::pair<int, std::string> refused(const TempDir& dir, const std::string& tag, std::vector<std::string> args) {
  args.insert(args.begin(), NCAST_SERVER_BIN);
  Process p(args, dir / (tag + ".stdout"), dir / (tag + ".stderr"));
  const auto code = p.wait(10s);
  return {code.value_or(-1), p.err()};
}

TEST(ServerErrors, TakenPortsAndMissingFilesAreNamed) {
  TempDir dir;
  write_file(dir / "m", random_bytes(10'000, 50));
  const std::string media = (dir / "m").string();
  auto first = start_server(dir, "first", {"--file", media, "--stats-interval", "0"});

  const std::string udp = "127.0.0.1:" + std::to_string(first.port);
  const auto [udp_code, udp_err] = refused(dir, "udp", {"--listen", udp, "--file", media});
  EXPECT_EQ(udp_code, 1) << udp_err;
  EXPECT_NE(udp_err.find("ncast-server: cannot bind UDP " + udp + ": Address already in use"), std::string::npos)
      << udp_err;

  const std::string tcp = "127.0.0.1:" + std::to_string(first.metrics);
  const auto [tcp_code, tcp_err] = refused(dir, "tcp", {"--listen", "127.0.0.1:0", "--metrics", tcp, "--file", media});
  EXPECT_EQ(tcp_code, 1) << tcp_err;
  EXPECT_NE(tcp_err.find("ncast-server: cannot bind TCP " + tcp + " (--metrics): Address already in use"),
            std::string::npos)
      << tcp_err;

  const std::string missing = (dir / "missing.conf").string();
  const auto [conf_code, conf_err] = refused(dir, "conf", {"--config", missing});
  EXPECT_EQ(conf_code, 2) << conf_err;
  EXPECT_NE(conf_err.find("cannot read config file " + missing + ": No such file or directory"), std::string::npos)
      << conf_err;
}

}  // namespace
}  // namespace ncast::e2e
