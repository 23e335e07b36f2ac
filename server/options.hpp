#pragma once
// ncast-server's command line and configuration file (the same names, `name = value` in the file;
// the command line wins).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cli/command_line.hpp"
#include "coding/backend.hpp"
#include "server/server.hpp"

namespace ncast::server {

struct LiveSource {
  std::string name;
  std::string path;
};

struct ServerOptions {
  std::vector<std::string> files, dirs;
  std::vector<LiveSource> live;
  std::uint32_t live_flush_ms = 500;
  std::uint32_t live_end_after_s = 0;
  // --live-window: one of the two is set (octets of segments held, or seconds of media).
  std::uint64_t live_window_bytes = 256ull << 20;
  std::uint32_t live_window_s = 0;
  std::size_t host_memory_mb = 512;
  std::uint16_t n = 128;
  std::uint32_t symbol_size = 1024;
  double density = 1.0;
  Backend backend = Backend::automatic;
  std::size_t coded_cache_mb = 256;
  std::size_t device_memory_mb = 8192;
  bool device_resident = true;
  std::optional<std::uint32_t> server_id;
  std::string identity;  // PEM path; empty: a fresh key per run
  std::uint64_t bitrate = 0;
  std::optional<net::Address> metrics;
  double stats_interval_s = 1.0;
  unsigned threads = 1;  // server threads on the port (SO_REUSEPORT), each with its own sessions
  ServerConfig config;
};

// What parse_server_options decided.
struct ParsedOptions {
  cli::Action action = cli::Action::run;
  std::string text;  // help or version text
  ServerOptions options;
};

// Throws std::invalid_argument with a message for the user on any bad option or value.
ParsedOptions parse_server_options(int argc, const char* const* argv);

}  // namespace ncast::server
