#include "server/options.hpp"

#include <boost/program_options.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include "cli/command_line.hpp"
#include "cli/rate.hpp"
#include "net/resolve.hpp"

namespace ncast::server {
namespace po = boost::program_options;

namespace {

// What the command line says before it is checked and converted into ServerOptions.
struct RawOptions {
  std::string listen, backend, bitrate, session_rate, max_rate, config_file, metrics, live_window;
  std::vector<std::string> live;
  std::uint32_t server_id = 0;
  unsigned n = 128, max_datagram = 1232, window = 16, pacing_tick_us = 1, pacing_burst = 16;
  double idle_timeout = 10, handshake_timeout = 3;
};

po::options_description stream_options(ServerOptions& o, RawOptions& r) {
  po::options_description d("Streams");
  d.add_options()("file", po::value(&o.files)->composing(),
                  "a media file, served as the stream named after the file (repeatable)")(
      "dir", po::value(&o.dirs)->composing(),
      "every non-empty regular file of a directory, each a stream (repeatable)")(
      "live", po::value(&r.live)->composing(),
      "NAME=PATH: a live stream read from a pipe, '-' (standard input) or a growing file (repeatable)")(
      "live-flush-ms", po::value(&o.live_flush_ms)->default_value(500),
      "cut a short live segment after this long without data")(
      "live-end-after", po::value(&o.live_end_after_s)->default_value(0),
      "end a growing-file live stream after this many seconds unchanged (0: never)")(
      "live-window", po::value(&r.live_window)->default_value("256MB"),
      "how much of a live stream is kept for peers: 60s (seconds of media at --bitrate, else since arrival) or "
      "256MB; older segments are dropped and peers asking for them start at the oldest kept (0: keep all)")(
      "host-memory-mb", po::value(&o.host_memory_mb)->default_value(512),
      "host memory for segments of files, read from disk on demand (least recently used go first)");
  return d;
}

po::options_description coding_options(ServerOptions& o, RawOptions& r) {
  po::options_description d("Coding");
  d.add_options()("symbols", po::value(&r.n)->default_value(128), "source symbols per segment, n (1..256)")(
      "symbol-size", po::value(&o.symbol_size)->default_value(1024), "octets per symbol, L; a segment is n·L octets")(
      "density", po::value(&o.density)->default_value(1.0),
      "fraction of non-zero coefficients in coded symbols, (0, 1]")(
      "backend", po::value(&r.backend)->default_value("auto"), "coding engine: auto, cpu or cuda")(
      "coded-cache-mb", po::value(&o.coded_cache_mb)->default_value(256),
      "memory for coded symbols shared by sessions")("device-memory-mb",
                                                     po::value(&o.device_memory_mb)->default_value(8192),
                                                     "GPU memory for resident segments (CUDA backend)")(
      "device-resident", po::value(&o.device_resident)->default_value(true),
      "with CUDA: keep segments on the GPU and code them there (false: the engine over host memory)");
  return d;
}

po::options_description network_options(ServerOptions& o, RawOptions& r) {
  po::options_description d("Network");
  d.add_options()("listen", po::value(&r.listen)->default_value("127.0.0.1:7700"),
                  "UDP HOST:PORT to serve on, HOST a name or address (port 0 picks one)")(
      "max-datagram", po::value(&r.max_datagram)->default_value(1232),
      "largest datagram sent (1232..65507); larger symbols need more")(
      "server-id", po::value(&r.server_id),
      "this server's id in the coefficient seed space (default: random); distinct per server of a stream")(
      "identity", po::value(&o.identity),
      "Ed25519 identity key (PEM); created if missing (default: a new key each run)")(
      "threads", po::value(&o.threads)->default_value(1),
      "server threads, each with its own socket on the port (SO_REUSEPORT) and its own sessions; 0: one per core")(
      "max-sessions", po::value(&o.config.max_sessions)->default_value(10000), "sessions at most")(
      "max-sessions-per-source", po::value(&o.config.max_sessions_per_source)->default_value(16),
      "sessions one IP address may hold (its /24 or /64 four times as many); 0: no limit (many local peers)")(
      "handshake-timeout", po::value(&r.handshake_timeout)->default_value(3.0),
      "seconds a session may wait for its peer's first ACK (or next JOIN) before it is freed")(
      "idle-timeout", po::value(&r.idle_timeout)->default_value(10.0),
      "seconds of silence after which a session is freed")(
      "token-lifetime", po::value(&o.config.token_lifetime_s)->default_value(30), "seconds a retry token stays valid")(
      "retry-rate", po::value(&o.config.retry_rate)->default_value(20000), "RETRY/REJECT packets per second at most")(
      "join-rate", po::value(&o.config.join_rate)->default_value(2000), "sessions created per second at most");
  return d;
}

po::options_description delivery_options(ServerOptions& o, RawOptions& r) {
  po::options_description d("Delivery");
  d.add_options()("bitrate", po::value(&r.bitrate)->default_value("0"),
                  "the streams' bitrate (e.g. 768k); paced sessions send at "
                  "bitrate·(1+headroom)/(1-loss); 0: unknown")(
      "redundancy", po::value(&o.config.redundancy)->default_value(0.02),
      "extra coded symbols in a segment's first round, beyond the measured loss")(
      "headroom", po::value(&o.config.headroom)->default_value(0.08, cli::shortest(0.08)),
      "how much faster than the bitrate paced sessions send (beyond the measured loss), so that a peer that fell "
      "behind catches up (0..1)")("window", po::value(&r.window)->default_value(16),
                                  "segments in flight per session at most (1..64)")(
      "session-rate", po::value(&r.session_rate)->default_value("100M"),
      "bit/s per download session (and paced ones without a bitrate)")(
      "max-rate", po::value(&r.max_rate)->default_value("1G"), "bit/s of all sessions together")(
      "pacing-tick-us", po::value(&r.pacing_tick_us)->default_value(1000),
      "µs grid of pacing wake-ups: the sessions due in a tick share one wake-up and one sendmmsg (about half the "
      "server CPU of per-session timing at a few hundred peers); 1: per-session timing (1..100000)")(
      "pacing-burst", po::value(&r.pacing_burst)->default_value(16),
      "datagrams a paced session sends in a row, as one UDP GSO message: fewer sends and peer wake-ups, for a delay of "
      "burst/rate; never more than the peer surely still needs, so a round's end goes one by one (1..32)");
  return d;
}

po::options_description observe_options(ServerOptions& o, RawOptions& r) {
  po::options_description d("Observability");
  d.add_options()("metrics", po::value(&r.metrics),
                  "serve Prometheus text at http://ADDR:PORT/metrics (port 0 picks one)")(
      "stats-interval", po::value(&o.stats_interval_s)->default_value(1.0),
      "seconds between JSON stats lines on standard output (0: none)");
  return d;
}

po::options_description general_options(RawOptions& r) {
  po::options_description d("General");
  d.add_options()("config", po::value(&r.config_file), "read options from FILE (name = value per line)")(
      "help,h", "show this help")("version", "show the version");
  return d;
}

// "60s" → seconds, "256MB" / "256M" → octets (MB = 2^20), "0" → no limit.
void parse_live_window(ServerOptions& o, const std::string& text) {
  std::size_t used = 0;
  unsigned long long value = 0;
  try {
    value = std::stoull(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  const std::string unit = used > 0 ? text.substr(used) : "?";
  o.live_window_bytes = 0;
  o.live_window_s = 0;
  if (unit == "s" && value > 0 && value <= 0xFFFFFFFFull) o.live_window_s = static_cast<std::uint32_t>(value);
  else if ((unit == "MB" || unit == "M") && value <= (1ull << 40)) o.live_window_bytes = value << 20;
  else if (!(unit.empty() && value == 0))
    throw std::invalid_argument("--live-window wants seconds (60s) or megabytes (256MB), not '" + text + "'");
}

void check_streams(ServerOptions& o, const RawOptions& r) {
  for (const auto& l : r.live) {
    const auto eq = l.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == l.size())
      throw std::invalid_argument("--live wants NAME=PATH, not '" + l + "'");
    o.live.push_back({l.substr(0, eq), l.substr(eq + 1)});
  }
  parse_live_window(o, r.live_window);
  if (o.host_memory_mb == 0) throw std::invalid_argument("--host-memory-mb must be at least 1");
  if (o.files.empty() && o.dirs.empty() && o.live.empty())
    throw std::invalid_argument("nothing to serve: give --file, --dir or --live (see --help)");
}

void check_coding(ServerOptions& o, const RawOptions& r) {
  cli::in_range("symbols", r.n, 1u, 256u);
  o.n = static_cast<std::uint16_t>(r.n);
  cli::in_range("symbol-size", o.symbol_size, 1u, 65536u);
  cli::in_range("max-datagram", r.max_datagram, 1232u, 65507u);
  if (proto::coded_packet_size(0, o.symbol_size) > r.max_datagram)
    throw std::invalid_argument("--symbol-size " + std::to_string(o.symbol_size) +
                                " needs --max-datagram of at least " +
                                std::to_string(proto::coded_packet_size(0, o.symbol_size)));
  if (!(o.density > 0 && o.density <= 1)) throw std::invalid_argument("--density must be in (0, 1]");
  const auto b = parse_backend(r.backend);
  if (!b) throw std::invalid_argument("--backend must be auto, cpu or cuda, not '" + r.backend + "'");
  o.backend = *b;
  if (o.coded_cache_mb == 0 || o.device_memory_mb == 0)
    throw std::invalid_argument("--coded-cache-mb and --device-memory-mb must be at least 1");
}

void check_network(ServerOptions& o, const RawOptions& r, const po::variables_map& vm) {
  if (!(r.idle_timeout > 0 && r.idle_timeout <= 3600))
    throw std::invalid_argument("--idle-timeout must be in (0, 3600] seconds");
  if (!(r.handshake_timeout > 0 && r.handshake_timeout <= 60))
    throw std::invalid_argument("--handshake-timeout must be in (0, 60] seconds");
  if (o.config.max_sessions == 0) throw std::invalid_argument("--max-sessions must be at least 1");
  if (!(o.config.retry_rate > 0) || !(o.config.join_rate > 0))
    throw std::invalid_argument("--retry-rate and --join-rate must be positive");
  if (o.config.token_lifetime_s == 0) throw std::invalid_argument("--token-lifetime must be at least 1");
  if (o.threads == 0) o.threads = std::max(1u, std::thread::hardware_concurrency());
  cli::in_range("threads", o.threads, 1u, 1024u);
  if (vm.count("server-id")) o.server_id = r.server_id;
  o.config.listen = net::resolve(r.listen, "--listen");
  o.config.max_datagram = static_cast<std::uint16_t>(r.max_datagram);
  o.config.sealed_cache_bytes = std::min(o.config.sealed_cache_bytes, o.coded_cache_mb << 20);
  o.config.idle_timeout_ms = static_cast<std::uint32_t>(r.idle_timeout * 1000);
  o.config.handshake_timeout_ms = static_cast<std::uint32_t>(r.handshake_timeout * 1000);
}

void check_delivery(ServerOptions& o, const RawOptions& r) {
  cli::in_range("window", r.window, 1u, 64u);
  o.config.max_window = static_cast<std::uint16_t>(r.window);
  cli::in_range("pacing-tick-us", r.pacing_tick_us, 1u, 100000u);
  o.config.pacing_tick = std::chrono::microseconds(r.pacing_tick_us);
  cli::in_range("pacing-burst", r.pacing_burst, 1u, 32u);
  o.config.pacing_burst = static_cast<std::uint16_t>(r.pacing_burst);
  if (!(o.config.redundancy >= 0 && o.config.redundancy <= 10))
    throw std::invalid_argument("--redundancy must be in 0..10");
  if (!(o.config.headroom >= 0 && o.config.headroom <= 1)) throw std::invalid_argument("--headroom must be in 0..1");
  o.bitrate = static_cast<std::uint64_t>(cli::parse_rate(r.bitrate));
  const double srate = cli::parse_rate(r.session_rate), mrate = cli::parse_rate(r.max_rate);
  if (srate < 8000 || mrate < 8000) throw std::invalid_argument("--session-rate and --max-rate must be at least 8k");
  o.config.session_rate = srate / 8;
  o.config.max_rate = mrate / 8;
}

void check_observe(ServerOptions& o, const RawOptions& r, const po::variables_map& vm) {
  if (o.stats_interval_s < 0) throw std::invalid_argument("--stats-interval must not be negative");
  if (vm.count("metrics")) o.metrics = net::resolve(r.metrics, "--metrics");
}

}  // namespace

ParsedOptions parse_server_options(int argc, const char* const* argv) {
  ParsedOptions out;
  ServerOptions& o = out.options;
  RawOptions r;
  po::options_description all;
  all.add(stream_options(o, r))
      .add(coding_options(o, r))
      .add(network_options(o, r))
      .add(delivery_options(o, r))
      .add(observe_options(o, r))
      .add(general_options(r));
  const po::variables_map vm = cli::parse_command_line(argc, argv, all, "config");
  if (vm.count("help")) {
    out.action = cli::Action::help;
    out.text = cli::help_text(
        "ncast-server: streams media files and live sources to ncast peers over UDP, as RLNC-coded symbols\n"
        "(docs/protocol.md).\n\nUsage: ncast-server [--file PATH | --dir PATH | --live NAME=PATH]... [options]\n",
        all);
    return out;
  }
  if (vm.count("version")) {
    out.action = cli::Action::version;
    out.text = cli::version_text("ncast-server", "protocol version 1");
    return out;
  }
  check_streams(o, r);
  check_coding(o, r);
  check_network(o, r, vm);
  check_delivery(o, r);
  check_observe(o, r, vm);
  return out;
}

}  // namespace ncast::server
