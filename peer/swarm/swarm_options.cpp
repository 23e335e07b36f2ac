#include "peer/swarm/swarm_options.hpp"

#include <unistd.h>

#include <boost/program_options.hpp>

#include <stdexcept>
#include <thread>

namespace ncast::swarm {
namespace po = boost::program_options;

namespace {

net::Address address(const std::string& text, const char* what) {
  const auto a = net::Address::parse(text);
  if (a.family == 0)
    throw std::invalid_argument(std::string("--") + what + " '" + text +
                                "' is not a numeric HOST:PORT (e.g. 127.0.0.1:7700)");
  return a;
}

}  // namespace

ParsedSwarmOptions parse_swarm_options(int argc, const char* const* argv) {
  ParsedSwarmOptions out;
  SwarmOptions& o = out.options;
  std::vector<std::string> servers, metrics;
  std::string loss = "none", scope = "peer", churn_mode = "bye", progress = "auto", server_mode = "all";
  std::string decoder = "auto";
  double delay_ms = 0, jitter_ms = 0, loss_slot_ms = 10, batch_wait_ms = 2;
  std::size_t batch = 512;
  unsigned window = 4, max_datagram = 1200;
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  unsigned threads = cores > 1 ? cores - 1 : 1;

  const std::string decoder_help =
      "cpu: each peer decodes on the CPU; gpu: the peers' segments are decoded together, batched on the GPU "
      "(fails without a CUDA device); auto: gpu when a device is usable and there are at least " +
      std::to_string(kAutoGpuPeers) + " peers";
  po::options_description opts("Options");
  opts.add_options()("server,s", po::value(&servers)->composing(),
                     "HOST:PORT of a server of the stream (repeatable; see --server-mode)")(
      "stream", po::value(&o.stream), "the stream's name")(
      "server-mode", po::value(&server_mode)->default_value("all"),
      "all: every peer pulls from every server (an equal share each); spread: peer i from server i mod k alone")(
      "metrics", po::value(&metrics)->composing(),
      "HOST:PORT of a server's /metrics, to report its CPU time per GB sent (repeatable)")(
      "peers,n", po::value(&o.peers)->default_value(10), "peers at once")(
      "threads", po::value(&threads)->default_value(threads), "worker threads running the peers (default: cores − 1)")(
      "realtime", po::value(&o.realtime_fraction)->default_value(1.0),
      "fraction of peers paced at the stream's bitrate; the rest download as fast as allowed")(
      "loss", po::value(&loss)->default_value("none"),
      "loss of arriving datagrams: none, bernoulli:P, burst:P:LEN (Gilbert–Elliott, mean loss P, mean burst LEN), "
      "ge:P_GB:P_BG:LOSS_GOOD:LOSS_BAD")(
      "loss-scope", po::value(&scope)->default_value("peer"),
      "peer: a loss process per peer; shared: one for the whole swarm (a common bottleneck)")(
      "loss-slot", po::value(&loss_slot_ms)->default_value(10.0),
      "ms: a bursty chain moves once per datagram, and k steps after k slots of silence (0: per datagram only)")(
      "delay", po::value(&delay_ms)->default_value(0.0), "one-way delay each direction, ms")(
      "jitter", po::value(&jitter_ms)->default_value(0.0),
      "each datagram's delay varies uniformly by up to ± this, ms (reorders)")(
      "ramp", po::value(&o.ramp_s)->default_value(1.0), "seconds over which the peers join")(
      "churn", po::value(&o.churn_rate)->default_value(0.0),
      "peers per second that leave mid-stream, each replaced by a newcomer")(
      "churn-for", po::value(&o.churn_duration_s)->default_value(10.0),
      "seconds from the start during which churn happens")(
      "churn-mode", po::value(&churn_mode)->default_value("bye"),
      "how peers leave: bye (say goodbye) or vanish (fall silent)")(
      "timeout", po::value(&o.timeout_s)->default_value(120.0), "seconds after which peers still running have failed")(
      "window", po::value(&window)->default_value(4), "segments each peer decodes at once (1..64)")(
      "max-datagram", po::value(&max_datagram)->default_value(1200), "largest datagram accepted (1200..65507)")(
      "startup", po::value(&o.startup_s)->default_value(1.0),
      "seconds of buffer before the model player starts (late segments are counted from there)")(
      "seed", po::value(&o.seed)->default_value(1), "seed of the loss processes, jitter and churn")(
      "decoder", po::value(&decoder)->default_value("auto"), decoder_help.c_str())(
      "decode-batch", po::value(&batch)->default_value(512),
      "--decoder gpu: segments decoded per GPU launch, at most (1..65536)")(
      "decode-wait", po::value(&batch_wait_ms)->default_value(2.0),
      "--decoder gpu: ms a decoded-to-be segment waits for others to share its launch (0..1000)")(
      "json", po::bool_switch(&out.json),
      "print the report, with every peer, as JSON on standard output instead of a table")(
      "report", po::value(&out.report_path), "also write the JSON report to this file")(
      "progress", po::value(&progress)->default_value("auto"),
      "live summary on standard error: auto (on a terminal), on, off")("help,h", "show this help");
  const po::variables_map vm = cli::parse_command_line(argc, argv, opts);
  if (vm.count("help")) {
    out.action = cli::Action::help;
    out.text = cli::help_text(
        "ncast-swarm: runs many simulated ncast peers in one process against one or more servers, with\n"
        "emulated loss, delay, jitter and churn; every segment is decoded and verified (SHA-256). Prints a\n"
        "final table (or --json), with the servers' CPU time per GB sent when --metrics is given.\n\n"
        "Usage: ncast-swarm -s HOST:PORT --stream NAME [-n PEERS] [options]\n",
        opts);
    return out;
  }
  if (servers.empty()) throw std::invalid_argument("give at least one --server HOST:PORT");
  for (const auto& s : servers) {
    o.servers.push_back(address(s, "server"));
    if (o.servers.back().family != o.servers.front().family)
      throw std::invalid_argument("all servers must be IPv4 or all IPv6");
  }
  for (const auto& m : metrics) o.metrics.push_back(address(m, "metrics"));
  if (server_mode == "spread") o.spread = true;
  else if (server_mode != "all") throw std::invalid_argument("--server-mode must be all or spread");
  if (o.stream.empty() || o.stream.size() > 255) throw std::invalid_argument("give --stream NAME (1..255 octets)");
  if (o.peers < 1 || o.peers > 1000000) throw std::invalid_argument("--peers must be 1..1000000");
  if (threads < 1 || threads > 1024) throw std::invalid_argument("--threads must be 1..1024");
  o.threads = threads;
  if (!(o.realtime_fraction >= 0 && o.realtime_fraction <= 1))
    throw std::invalid_argument("--realtime must be in [0, 1]");
  o.loss = parse_loss(loss);
  if (!(loss_slot_ms >= 0 && loss_slot_ms <= 10000)) throw std::invalid_argument("--loss-slot must be in 0..10000 ms");
  o.loss_slot = std::chrono::microseconds(static_cast<long long>(loss_slot_ms * 1000));
  if (scope == "shared") o.loss_shared = true;
  else if (scope != "peer") throw std::invalid_argument("--loss-scope must be peer or shared");
  if (!(delay_ms >= 0 && delay_ms <= 10000) || !(jitter_ms >= 0 && jitter_ms <= 10000))
    throw std::invalid_argument("--delay and --jitter must be in 0..10000 ms");
  o.delay = std::chrono::microseconds(static_cast<long long>(delay_ms * 1000));
  o.jitter = std::chrono::microseconds(static_cast<long long>(jitter_ms * 1000));
  if (!(o.ramp_s >= 0) || !(o.churn_rate >= 0) || !(o.churn_duration_s >= 0) || !(o.startup_s >= 0))
    throw std::invalid_argument("--ramp, --churn, --churn-for and --startup must not be negative");
  if (!(o.timeout_s > 0)) throw std::invalid_argument("--timeout must be positive");
  if (churn_mode == "bye") o.churn_polite = true;
  else if (churn_mode == "vanish") o.churn_polite = false;
  else throw std::invalid_argument("--churn-mode must be bye or vanish");
  if (window < 1 || window > 64) throw std::invalid_argument("--window must be 1..64");
  o.window = static_cast<std::uint16_t>(window);
  if (max_datagram < 1200 || max_datagram > 65507) throw std::invalid_argument("--max-datagram must be 1200..65507");
  o.max_datagram = static_cast<std::uint16_t>(max_datagram);
  const auto choice = peer::parse_decoder_choice(decoder);
  if (!choice) throw std::invalid_argument("--decoder must be cpu, gpu or auto, not '" + decoder + "'");
  o.decoder = *choice;
  if (batch < 1 || batch > 65536) throw std::invalid_argument("--decode-batch must be 1..65536");
  o.batch.max_batch = batch;
  if (!(batch_wait_ms >= 0 && batch_wait_ms <= 1000))
    throw std::invalid_argument("--decode-wait must be in 0..1000 ms");
  o.batch.max_wait = std::chrono::microseconds(static_cast<long long>(batch_wait_ms * 1000));
  if (progress == "auto") out.progress = ::isatty(STDERR_FILENO) == 1;
  else if (progress == "on") out.progress = true;
  else if (progress == "off") out.progress = false;
  else throw std::invalid_argument("--progress must be auto, on or off");
  return out;
}

}  // namespace ncast::swarm
