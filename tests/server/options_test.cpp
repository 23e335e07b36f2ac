// ncast-server's options: defaults, ranges, config file, help.
#include "server/options.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "server/stream_catalog.hpp"

namespace ncast::server {
namespace {

ParsedOptions parse(std::vector<const char*> args) {
  args.insert(args.begin(), "ncast-server");
  return parse_server_options(static_cast<int>(args.size()), args.data());
}

TEST(ServerOptions, DefaultsAndValues) {
  auto p = parse({"--file", "a.ts", "--live", "cam=/tmp/fifo", "--bitrate", "768k", "--session-rate", "20M", "--listen",
                  "127.0.0.1:0", "--symbols", "64", "--symbol-size", "1400", "--max-datagram", "1500"});
  ASSERT_EQ(p.action, cli::Action::run);
  const auto& o = p.options;
  EXPECT_EQ(o.files, std::vector<std::string>{"a.ts"});
  ASSERT_EQ(o.live.size(), 1u);
  EXPECT_EQ(o.live[0].name, "cam");
  EXPECT_EQ(o.live[0].path, "/tmp/fifo");
  EXPECT_EQ(o.bitrate, 768000u);
  EXPECT_DOUBLE_EQ(o.config.session_rate, 20e6 / 8);
  EXPECT_EQ(o.config.listen.port, 0);
  EXPECT_EQ(o.n, 64);
  EXPECT_EQ(o.config.max_datagram, 1500);
  EXPECT_EQ(o.backend, Backend::automatic);
  EXPECT_FALSE(o.server_id);
  EXPECT_EQ(o.threads, 1u);
  EXPECT_EQ(o.config.pacing_tick, std::chrono::microseconds(1000));
  EXPECT_DOUBLE_EQ(o.config.headroom, 0.08);
  EXPECT_EQ(o.config.pacing_burst, 16);
  EXPECT_EQ(o.config.max_sessions_per_source, 16u);
  EXPECT_EQ(o.config.handshake_timeout_ms, 3000u);
  const auto f = parse({"--file", "a", "--max-sessions-per-source", "0", "--handshake-timeout", "0.5"});
  EXPECT_EQ(f.options.config.max_sessions_per_source, 0u);
  EXPECT_EQ(f.options.config.handshake_timeout_ms, 500u);
  const auto t =
      parse({"--file", "a", "--threads", "3", "--pacing-tick-us", "250", "--headroom", "0.2", "--pacing-burst", "1"});
  EXPECT_EQ(t.options.threads, 3u);
  EXPECT_EQ(t.options.config.pacing_tick, std::chrono::microseconds(250));
  EXPECT_DOUBLE_EQ(t.options.config.headroom, 0.2);
  EXPECT_EQ(t.options.config.pacing_burst, 1);
  EXPECT_GE(parse({"--file", "a", "--threads", "0"}).options.threads, 1u);  // one per core
}

TEST(ServerOptions, BadValuesAreRefusedWithAMessage) {
  for (auto args : std::vector<std::vector<const char*>>{
           {},  // nothing to serve
           {"--file", "a", "--symbols", "0"},
           {"--file", "a", "--symbols", "257"},
           {"--file", "a", "--symbol-size", "1200"},  // does not fit 1200-octet datagrams
           {"--file", "a", "--max-datagram", "100"},
           {"--file", "a", "--backend", "gpu"},
           {"--file", "a", "--listen", "nosuch.invalid:80"},  // does not resolve
           {"--file", "a", "--listen", "localhost"},          // no port
           {"--file", "a", "--live", "noequals"},
           {"--file", "a", "--bitrate", "fast"},
           {"--file", "a", "--density", "0"},
           {"--file", "a", "--window", "65"},
           {"--file", "a", "--threads", "1025"},
           {"--file", "a", "--pacing-tick-us", "0"},
           {"--file", "a", "--pacing-burst", "0"},
           {"--file", "a", "--pacing-burst", "33"},
           {"--file", "a", "--headroom", "-0.1"},
           {"--file", "a", "--headroom", "1.5"},
           {"--file", "a", "--handshake-timeout", "0"},
           {"--file", "a", "--handshake-timeout", "61"},
           {"--file", "a", "--no-such-option"},
       })
    EXPECT_THROW(parse(args), std::invalid_argument) << (args.empty() ? "(none)" : args.back());
}

TEST(ServerOptions, MemoryBudgetAndLiveWindow) {
  const auto d = parse({"--live", "cam=-"}).options;
  EXPECT_EQ(d.host_memory_mb, 512u);
  EXPECT_EQ(d.live_window_bytes, 256ull << 20);
  EXPECT_EQ(d.live_window_s, 0u);
  EXPECT_EQ(live_window(d).bytes, 256ull << 20);
  const auto s = parse({"--live", "cam=-", "--live-window", "60s", "--host-memory-mb", "64"}).options;
  EXPECT_EQ(s.host_memory_mb, 64u);
  EXPECT_EQ(s.live_window_bytes, 0u);
  EXPECT_EQ(live_window(s).age, std::chrono::seconds(60));  // no bitrate: seconds since arrival
  const auto b = parse({"--live", "cam=-", "--live-window", "60s", "--bitrate", "1M"}).options;
  EXPECT_EQ(live_window(b).bytes, 60u * 1000000 / 8);  // seconds of media at the bitrate
  EXPECT_EQ(live_window(b).age.count(), 0);
  EXPECT_EQ(parse({"--live", "cam=-", "--live-window", "32M"}).options.live_window_bytes, 32ull << 20);
  const auto all = parse({"--live", "cam=-", "--live-window", "0"}).options;
  EXPECT_EQ(live_window(all).bytes, 0u);
  EXPECT_EQ(live_window(all).age.count(), 0);
  for (const char* bad : {"", "60", "s", "-5s", "0s", "12GB", "1.5MB", "60 s"})
    EXPECT_THROW(parse({"--live", "cam=-", "--live-window", bad}), std::invalid_argument) << bad;
  EXPECT_THROW(parse({"--file", "a", "--host-memory-mb", "0"}), std::invalid_argument);
}

TEST(ServerOptions, ConfigFileAndHelp) {
  const auto path = std::filesystem::temp_directory_path() / ("ncast-opts-" + std::to_string(::getpid()) + ".conf");
  {
    std::ofstream f(path);
    f << "file = movie.ts\nredundancy = 0.2\nserver-id = 7\n";
  }
  auto p = parse({"--config", path.c_str(), "--redundancy", "0.1"});
  EXPECT_EQ(p.options.files, std::vector<std::string>{"movie.ts"});
  EXPECT_DOUBLE_EQ(p.options.config.redundancy, 0.1);  // the command line wins
  EXPECT_EQ(*p.options.server_id, 7u);
  std::filesystem::remove(path);
  EXPECT_THROW(parse({"--config", "/nonexistent/ncast.conf"}), std::invalid_argument);
  auto h = parse({"--help"});
  EXPECT_EQ(h.action, cli::Action::help);
  EXPECT_NE(h.text.find("--session-rate"), std::string::npos);
}

}  // namespace
}  // namespace ncast::server
