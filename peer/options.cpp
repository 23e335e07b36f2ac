#include "peer/options.hpp"

#include <unistd.h>

#include <boost/program_options.hpp>

#include <stdexcept>

#include "cli/rate.hpp"
#include "net/resolve.hpp"

namespace ncast::peer {
namespace po = boost::program_options;

namespace {

// What the command line says before it is checked and converted into PeerOptions.
struct RawOptions {
  std::vector<std::string> servers;
  std::string server_key, origin_key, relay, max_rate = "0", start = "live", progress = "auto", decoder = "cpu";
  std::uint64_t relay_memory_mb = 64;
  unsigned window = 8, max_datagram = 1232;
  double stall_timeout = 2.0, stall_threshold = 0.5;
  bool paced = false;
  std::uint32_t relay_id = 0;
};

// The groups below add to one description, in the order --help has always listed them.
void add_source_options(po::options_description& d, PeerOptions& o, RawOptions& r) {
  d.add_options()("server,s", po::value(&r.servers)->composing(),
                  "HOST:PORT of a server of the stream (repeat to pull from several at once)")(
      "stream", po::value(&o.stream), "the stream's name")(
      "output,o", po::value(&o.output),
      "write the stream here ('-' = standard output); without it the stream is only checked")(
      "force", po::bool_switch(&o.force), "replace an existing output file (once the stream is complete)");
}

void add_session_options(po::options_description& d, RawOptions& r) {
  d.add_options()("start", po::value(&r.start)->default_value("live"),
                  "first segment wanted, or 'live': a live stream's newest segment that starts at a keyframe "
                  "(a file's first)")("window", po::value(&r.window)->default_value(8),
                                      "segments decoded at once (1..64)")(
      "paced", po::bool_switch(&r.paced),
      "ask for the stream's bitrate (playback) rather than as fast as allowed (download)")(
      "max-rate", po::value(&r.max_rate)->default_value("0"),
      "cap on each session's rate, bit/s (e.g. 20M); 0: the server's")(
      "max-datagram", po::value(&r.max_datagram)->default_value(1232), "largest datagram accepted (1232..65507)")(
      "server-key", po::value(&r.server_key),
      "pin the server's Ed25519 identity (64 hex digits, printed by ncast-server)")(
      "origin-key", po::value(&r.origin_key),
      "pin the stream's origin (64 hex digits: the identity its ncast-server prints): segment tables "
      "only it signed are taken, from it or from any relay");
}

void add_relay_options(po::options_description& d, PeerOptions& o, RawOptions& r) {
  d.add_options()("relay", po::value(&r.relay),
                  "also serve recoded symbols to other peers on HOST:PORT (port 0 picks one)")(
      "relay-id", po::value(&r.relay_id), "the relay's id in the coefficient seed space (default: random)")(
      "relay-linger", po::value(&o.relay_linger_s)->default_value(30.0),
      "seconds to keep relaying after completing, at most")(
      "relay-memory-mb", po::value(&r.relay_memory_mb)->default_value(64),
      "decoded segments a relay keeps to recode from; the oldest are evicted beyond it");
}

void add_run_options(po::options_description& d, PeerOptions& o, RawOptions& r) {
  d.add_options()("decoder", po::value(&r.decoder)->default_value("cpu"),
                  "decode on: cpu, gpu (a CUDA device, or fail) or auto (the GPU when one is usable)")(
      "loss", po::value(&o.loss)->default_value(0.0),
      "simulate loss: drop this fraction of arriving datagrams (testing)")("seed", po::value(&o.seed)->default_value(0),
                                                                           "seed of the simulated loss (0: random)")(
      "timeout", po::value(&o.timeout_s)->default_value(0.0), "give up after this many seconds (0: never)")(
      "stall-timeout", po::value(&r.stall_timeout)->default_value(2.0),
      "seconds of silence while data is awaited before joining a server again")(
      "stall-threshold", po::value(&r.stall_threshold)->default_value(0.5),
      "seconds the output may wait for a segment before it counts as a stall")(
      "report", po::value(&o.report_path), "also write the final JSON report to this file")(
      "progress", po::value(&r.progress)->default_value("auto"),
      "progress bar on standard error: auto (on a terminal), on, off")("help,h", "show this help")("version",
                                                                                                   "show the version");
}

void check_source(PeerOptions& o, const RawOptions& r) {
  if (r.servers.empty()) throw std::invalid_argument("give at least one --server HOST:PORT");
  for (const auto& s : r.servers) {
    const auto a = net::resolve(s, "--server");
    if (!o.servers.empty() && a.family != o.servers.front().family)
      throw std::invalid_argument("all servers must be IPv4 or all IPv6");
    o.servers.push_back(a);
  }
  if (o.stream.empty() || o.stream.size() > 255) throw std::invalid_argument("give --stream NAME (1..255 octets)");
}

void check_start(PeerOptions& o, const std::string& start) {
  if (start == "live") {
    o.live_edge = true;
    return;
  }
  try {
    std::size_t used = 0;
    const unsigned long v = std::stoul(start, &used);
    if (used != start.size() || v > 0xFFFFFFFEul) throw std::invalid_argument("");
    o.start_segment = static_cast<std::uint32_t>(v);
  } catch (const std::exception&) {
    throw std::invalid_argument("--start must be a segment number or 'live'");
  }
}

proto::PublicKey parse_key(const std::string& hex, const std::string& option) {
  const auto key = proto::from_hex(hex);
  if (!key || key->size() != 32) throw std::invalid_argument(option + " must be 64 hex digits");
  proto::PublicKey k{};
  std::copy(key->begin(), key->end(), k.begin());
  return k;
}

void check_session(PeerOptions& o, const RawOptions& r) {
  check_start(o, r.start);
  if (r.window < 1 || r.window > 64) throw std::invalid_argument("--window must be 1..64");
  o.window = static_cast<std::uint16_t>(r.window);
  if (r.max_datagram < 1232 || r.max_datagram > 65507)
    throw std::invalid_argument("--max-datagram must be 1232..65507");
  o.max_datagram = static_cast<std::uint16_t>(r.max_datagram);
  o.download = !r.paced;
  o.max_rate = cli::parse_rate(r.max_rate);
  if (!r.server_key.empty()) o.server_key = parse_key(r.server_key, "--server-key");
  if (!r.origin_key.empty()) o.origin_key = parse_key(r.origin_key, "--origin-key");
}

void check_relay(PeerOptions& o, const RawOptions& r, const po::variables_map& vm) {
  if (!r.relay.empty()) o.relay = net::resolve(r.relay, "--relay");
  if (vm.count("relay-id")) o.relay_id = r.relay_id;
  if (r.relay_memory_mb > (std::uint64_t{1} << 40)) throw std::invalid_argument("--relay-memory-mb is too large");
  o.relay_memory = r.relay_memory_mb << 20;
}

void check_run(PeerOptions& o, const RawOptions& r) {
  const auto choice = parse_decoder_choice(r.decoder);
  if (!choice) throw std::invalid_argument("--decoder must be cpu, gpu or auto, not '" + r.decoder + "'");
  o.decoder = *choice;
  if (!(o.loss >= 0 && o.loss < 1)) throw std::invalid_argument("--loss must be in [0, 1)");
  if (o.timeout_s < 0 || !(r.stall_timeout > 0) || r.stall_threshold < 0 || o.relay_linger_s < 0)
    throw std::invalid_argument("times must not be negative (and --stall-timeout positive)");
  o.stall_timeout = std::chrono::milliseconds(static_cast<long>(r.stall_timeout * 1000));
  o.stall_threshold = std::chrono::milliseconds(static_cast<long>(r.stall_threshold * 1000));
  if (r.progress == "auto") o.progress = ::isatty(STDERR_FILENO) == 1;
  else if (r.progress == "on") o.progress = true;
  else if (r.progress == "off") o.progress = false;
  else throw std::invalid_argument("--progress must be auto, on or off");
}

}  // namespace

ParsedPeerOptions parse_peer_options(int argc, const char* const* argv) {
  ParsedPeerOptions out;
  PeerOptions& o = out.options;
  RawOptions r;
  po::options_description opts("Options");
  add_source_options(opts, o, r);
  add_session_options(opts, r);
  add_relay_options(opts, o, r);
  add_run_options(opts, o, r);
  const po::variables_map vm = cli::parse_command_line(argc, argv, opts);
  if (vm.count("help")) {
    out.action = cli::Action::help;
    out.text = cli::help_text(
        "ncast-peer: receives an ncast stream from one or more servers, decodes it, verifies every segment\n"
        "(SHA-256) and writes it in order; can relay recoded symbols to other peers. Prints a JSON report\n"
        "on standard error at the end.\n\nUsage: ncast-peer --server HOST:PORT --stream NAME [-o FILE|-] [options]\n",
        opts);
    return out;
  }
  if (vm.count("version")) {
    out.action = cli::Action::version;
    out.text = cli::version_text("ncast-peer", "protocol version 1");
    return out;
  }
  check_source(o, r);
  check_session(o, r);
  check_relay(o, r, vm);
  check_run(o, r);
  return out;
}

}  // namespace ncast::peer
