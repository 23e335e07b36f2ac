#include "peer/swarm/swarm_options.hpp"

#include <unistd.h>

#include <boost/program_options.hpp>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "net/resolve.hpp"

namespace ncast::swarm {
namespace po = boost::program_options;

namespace {

std::chrono::microseconds from_ms(double ms) { return std::chrono::microseconds(static_cast<long long>(ms * 1000)); }

// What the command line says before it is checked and converted into SwarmOptions.
struct RawOptions {
  std::vector<std::string> servers, metrics;
  std::string server_mode = "all", loss = "none", scope = "peer", churn_mode = "bye", decoder = "auto";
  std::string progress = "auto", part_cache = "on";
  double delay_ms = 0, jitter_ms = 0, loss_slot_ms = 10, batch_wait_ms = 2;
  std::size_t batch = 512;
  unsigned window = 4, max_datagram = 1232;
  unsigned threads = default_threads();

  static unsigned default_threads() {
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    return cores > 1 ? cores - 1 : 1;
  }
};

// Each group adds its options to the one description, in the order that --help lists them.

void declare_servers(po::options_description& d, SwarmOptions& o, RawOptions& r) {
  d.add_options()("server,s", po::value(&r.servers)->composing(),
                  "HOST:PORT of a server of the stream (repeatable; see --server-mode)")("stream", po::value(&o.stream),
                                                                                         "the stream's name")(
      "server-mode", po::value(&r.server_mode)->default_value("all"),
      "all: every peer pulls from every server (an equal share each); spread: peer i from server i mod k alone")(
      "metrics", po::value(&r.metrics)->composing(),
      "HOST:PORT of a server's /metrics, to report its CPU time per GB sent (repeatable)");
}

void declare_peers(po::options_description& d, SwarmOptions& o, RawOptions& r) {
  d.add_options()("peers,n", po::value(&o.peers)->default_value(10), "peers at once")(
      "threads", po::value(&r.threads)->default_value(r.threads),
      "worker threads running the peers (default: cores − 1)")(
      "peers-per-socket", po::value(&o.peers_per_socket)->default_value(64),
      "toward an IPv4 loopback server, this many peers of a thread share a UDP socket, each under a 127/8 "
      "address of its own (so a swarm needs a descriptor per group, not per peer); other servers (IPv6, "
      "another host), or 1: a socket per peer")(
      "part-cache", po::value(&r.part_cache)->default_value("on"),
      "on: the peers of a thread hash and open each CODED shared part once (SHA-256 and the stream key's open, "
      "reused only for equal octets under the same key; each peer still checks its own authenticator); off: each "
      "peer hashes and opens every datagram")(
      "realtime", po::value(&o.realtime_fraction)->default_value(1.0),
      "fraction of peers paced at the stream's bitrate; the rest download as fast as allowed")(
      "verify-fraction", po::value(&o.verify_fraction)->default_value(1.0),
      "fraction of peers, in (0, 1], that decode and SHA-256 every segment; the others only authenticate each "
      "datagram and track ranks from the coefficients (the same traffic and ACKs for less CPU)");
}

void declare_path(po::options_description& d, RawOptions& r) {
  d.add_options()("loss", po::value(&r.loss)->default_value("none"),
                  "loss of arriving datagrams: none, bernoulli:P, burst:P:LEN (Gilbert–Elliott, mean loss P, mean "
                  "burst LEN), ge:P_GB:P_BG:LOSS_GOOD:LOSS_BAD")(
      "loss-scope", po::value(&r.scope)->default_value("peer"),
      "peer: a loss process per peer; shared: one for the whole swarm (a common bottleneck)")(
      "loss-slot", po::value(&r.loss_slot_ms)->default_value(10.0),
      "ms: a bursty chain moves once per datagram, and k steps after k slots of silence (0: per datagram only)")(
      "delay", po::value(&r.delay_ms)->default_value(0.0), "one-way delay each direction, ms")(
      "jitter", po::value(&r.jitter_ms)->default_value(0.0),
      "each datagram's delay varies uniformly by up to ± this, ms (reorders)");
}

void declare_course(po::options_description& d, SwarmOptions& o, RawOptions& r) {
  d.add_options()("ramp", po::value(&o.ramp_s)->default_value(1.0), "seconds over which the peers join")(
      "churn", po::value(&o.churn_rate)->default_value(0.0),
      "peers per second that leave mid-stream, each replaced by a newcomer")(
      "churn-for", po::value(&o.churn_duration_s)->default_value(10.0),
      "seconds from the start during which churn happens")(
      "churn-mode", po::value(&r.churn_mode)->default_value("bye"),
      "how peers leave: bye (say goodbye) or vanish (fall silent)")(
      "timeout", po::value(&o.timeout_s)->default_value(120.0), "seconds after which peers still running have failed");
}

// --seed, which drives the path's and the churn's draws, follows the receivers' settings in --help.
void declare_receivers(po::options_description& d, SwarmOptions& o, RawOptions& r) {
  d.add_options()("window", po::value(&r.window)->default_value(4), "segments each peer decodes at once (1..64)")(
      "max-datagram", po::value(&r.max_datagram)->default_value(1232), "largest datagram accepted (1232..65507)")(
      "startup", po::value(&o.startup_s)->default_value(1.0),
      "seconds of buffer before the model player starts (late segments are counted from there)")(
      "seed", po::value(&o.seed)->default_value(1), "seed of the loss processes, jitter and churn");
}

void declare_decoding(po::options_description& d, RawOptions& r, const std::string& decoder_help) {
  d.add_options()("decoder", po::value(&r.decoder)->default_value("auto"), decoder_help.c_str())(
      "decode-batch", po::value(&r.batch)->default_value(512),
      "--decoder gpu: segments decoded per GPU launch, at most (1..65536)")(
      "decode-wait", po::value(&r.batch_wait_ms)->default_value(2.0),
      "--decoder gpu: ms a decoded-to-be segment waits for others to share its launch (0..1000)");
}

void declare_output(po::options_description& d, ParsedSwarmOptions& out, RawOptions& r) {
  d.add_options()("json", po::bool_switch(&out.json),
                  "print the report, with every peer, as JSON on standard output instead of a table")(
      "report", po::value(&out.report_path), "also write the JSON report to this file")(
      "progress", po::value(&r.progress)->default_value("auto"),
      "live summary on standard error: auto (on a terminal), on, off")("help,h", "show this help")("version",
                                                                                                   "show the version");
}

void check_servers(SwarmOptions& o, const RawOptions& r) {
  if (r.servers.empty()) throw std::invalid_argument("give at least one --server HOST:PORT");
  for (const auto& s : r.servers) {
    o.servers.push_back(net::resolve(s, "--server"));
    if (o.servers.back().family != o.servers.front().family)
      throw std::invalid_argument("all servers must be IPv4 or all IPv6");
  }
  for (const auto& m : r.metrics) o.metrics.push_back(net::resolve(m, "--metrics"));
  if (r.server_mode == "spread") o.spread = true;
  else if (r.server_mode != "all") throw std::invalid_argument("--server-mode must be all or spread");
  if (o.stream.empty() || o.stream.size() > 255) throw std::invalid_argument("give --stream NAME (1..255 octets)");
}

void check_peers(SwarmOptions& o, const RawOptions& r) {
  if (o.peers < 1 || o.peers > 1000000) throw std::invalid_argument("--peers must be 1..1000000");
  if (r.threads < 1 || r.threads > 1024) throw std::invalid_argument("--threads must be 1..1024");
  o.threads = r.threads;
  if (r.part_cache == "on") o.share_parts = true;
  else if (r.part_cache == "off") o.share_parts = false;
  else throw std::invalid_argument("--part-cache must be on or off");
  if (o.peers_per_socket < 1 || o.peers_per_socket > 4096)
    throw std::invalid_argument("--peers-per-socket must be 1..4096");
  if (!(o.realtime_fraction >= 0 && o.realtime_fraction <= 1))
    throw std::invalid_argument("--realtime must be in [0, 1]");
  if (!(o.verify_fraction > 0 && o.verify_fraction <= 1))
    throw std::invalid_argument("--verify-fraction must be in (0, 1] (a fraction of the peers), not " +
                                cli::shortest(o.verify_fraction));
}

void check_path(SwarmOptions& o, const RawOptions& r) {
  o.loss = parse_loss(r.loss);
  if (!(r.loss_slot_ms >= 0 && r.loss_slot_ms <= 10000))
    throw std::invalid_argument("--loss-slot must be in 0..10000 ms");
  o.loss_slot = from_ms(r.loss_slot_ms);
  if (r.scope == "shared") o.loss_shared = true;
  else if (r.scope != "peer") throw std::invalid_argument("--loss-scope must be peer or shared");
  if (!(r.delay_ms >= 0 && r.delay_ms <= 10000) || !(r.jitter_ms >= 0 && r.jitter_ms <= 10000))
    throw std::invalid_argument("--delay and --jitter must be in 0..10000 ms");
  o.delay = from_ms(r.delay_ms);
  o.jitter = from_ms(r.jitter_ms);
}

// The times include --startup, declared with the receivers but bounded with the other times.
void check_course(SwarmOptions& o, const RawOptions& r) {
  if (!(o.ramp_s >= 0) || !(o.churn_rate >= 0) || !(o.churn_duration_s >= 0) || !(o.startup_s >= 0))
    throw std::invalid_argument("--ramp, --churn, --churn-for and --startup must not be negative");
  if (!(o.timeout_s > 0)) throw std::invalid_argument("--timeout must be positive");
  if (r.churn_mode == "bye") o.churn_polite = true;
  else if (r.churn_mode == "vanish") o.churn_polite = false;
  else throw std::invalid_argument("--churn-mode must be bye or vanish");
}

void check_receivers(SwarmOptions& o, const RawOptions& r) {
  if (r.window < 1 || r.window > 64) throw std::invalid_argument("--window must be 1..64");
  o.window = static_cast<std::uint16_t>(r.window);
  if (r.max_datagram < 1232 || r.max_datagram > 65507)
    throw std::invalid_argument("--max-datagram must be 1232..65507");
  o.max_datagram = static_cast<std::uint16_t>(r.max_datagram);
}

void check_decoding(SwarmOptions& o, const RawOptions& r) {
  const auto choice = peer::parse_decoder_choice(r.decoder);
  if (!choice) throw std::invalid_argument("--decoder must be cpu, gpu or auto, not '" + r.decoder + "'");
  o.decoder = *choice;
  if (r.batch < 1 || r.batch > 65536) throw std::invalid_argument("--decode-batch must be 1..65536");
  o.batch.max_batch = r.batch;
  if (!(r.batch_wait_ms >= 0 && r.batch_wait_ms <= 1000))
    throw std::invalid_argument("--decode-wait must be in 0..1000 ms");
  o.batch.max_wait = from_ms(r.batch_wait_ms);
}

void check_output(ParsedSwarmOptions& out, const RawOptions& r) {
  if (r.progress == "auto") out.progress = ::isatty(STDERR_FILENO) == 1;
  else if (r.progress == "on") out.progress = true;
  else if (r.progress == "off") out.progress = false;
  else throw std::invalid_argument("--progress must be auto, on or off");
}

}  // namespace

ParsedSwarmOptions parse_swarm_options(int argc, const char* const* argv) {
  ParsedSwarmOptions out;
  SwarmOptions& o = out.options;
  RawOptions r;
  const std::string decoder_help =
      "cpu: each peer decodes on the CPU; gpu: the peers' segments are decoded together, batched on the GPU "
      "(fails without a CUDA device); auto: gpu when a device is usable and there are at least " +
      std::to_string(kAutoGpuPeers) + " peers";
  po::options_description opts("Options");
  declare_servers(opts, o, r);
  declare_peers(opts, o, r);
  declare_path(opts, r);
  declare_course(opts, o, r);
  declare_receivers(opts, o, r);
  declare_decoding(opts, r, decoder_help);
  declare_output(opts, out, r);
  const po::variables_map vm = cli::parse_command_line(argc, argv, opts);
  if (vm.count("help")) {
    out.action = cli::Action::help;
    out.text = cli::help_text(
        "ncast-swarm: runs many simulated ncast peers in one process against one or more servers, with\n"
        "emulated loss, delay, jitter and churn; every segment is decoded and verified (SHA-256), by every\n"
        "peer or by the --verify-fraction of them (the others count ranks). Prints a final table (or --json),\n"
        "with the servers' CPU time per GB sent when --metrics is given.\n\n"
        "Usage: ncast-swarm -s HOST:PORT --stream NAME [-n PEERS] [options]\n",
        opts);
    return out;
  }
  if (vm.count("version")) {
    out.action = cli::Action::version;
    out.text = cli::version_text("ncast-swarm", "protocol version 1");
    return out;
  }
  check_servers(o, r);
  check_peers(o, r);
  check_path(o, r);
  check_course(o, r);
  check_receivers(o, r);
  check_decoding(o, r);
  check_output(out, r);
  return out;
}

}  // namespace ncast::swarm
