// ncast-bench serve: the largest swarm one ncast-server keeps up with. Each trial starts a fresh server
// process over a stream of random media, runs a swarm of realtime peers at the stream's bitrate
// (ncast_swarm, in this process), and passes when every peer completed with every segment verified and
// fewer than --late-limit of the segments came after the model player wanted them. The peer count
// doubles until a trial fails, then is bisected, within --budget seconds in all. Each trial is
// anchored by the raw UDP rate of the host (raw_udp_anchor.hpp) with as many destinations, in GSO runs
// of --anchor-run datagrams to one peer (8, issue 17's anchor): the coded send path's GB per server
// CPU-second is printed as a fraction of it, and of one datagram per send. --plot
// draws peers against late segments and server CPU with gnuplot.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <thread>

#include "cli/command_line.hpp"
#include "cli/rate.hpp"
#include "cli/subcommands.hpp"
#include "net/address.hpp"
#include "peer/swarm/swarm.hpp"
#include "protocol/packets.hpp"
#include "server/options.hpp"
#include "tools/bench/bench.hpp"
#include "tools/bench/raw_udp_anchor.hpp"
#include "tools/bench/server_process.hpp"
#include "tools/bench/subcommands.hpp"
#include "tools/temp_dir.hpp"

namespace ncast::bench {
namespace {

namespace po = boost::program_options;
namespace fs = std::filesystem;

struct ServeOptions {
  std::string bitrate = "768k";
  double media_seconds = 20;
  unsigned n = 128, symbol_size = 1024;
  std::size_t start = 50, max = 100000;
  double budget_s = 600;
  double precision = 0.1;
  double late_limit = 0.01;
  double verify_fraction = 1.0;  // ncast-swarm --verify-fraction
  unsigned threads = 0;
  std::size_t peers_per_socket = 64;  // ncast-swarm --peers-per-socket
  std::string loss = "none";
  std::string server_bin;
  int server_cpu = -1;
  unsigned servers = 1;
  unsigned server_threads = 1;
  unsigned pacing_tick_us = 0;  // 0: the server's default
  unsigned pacing_burst = 16;
  double anchor_seconds = 1.0;
  std::size_t anchor_run = 8;  // issue 17's anchor: GSO runs of 8; 0: the pacing burst
  std::string plot;
  std::string backend = "auto";
};

struct Trial {
  std::size_t peers = 0;
  bool pass = false;
  nlohmann::json swarm;
  RawUdpResult anchor, single;  // runs of anchor_run datagrams to a destination; one at a time
  double wall_s = 0;
  std::string engine;  // as the server announced it
};

using tools::TempDir;

// The best of three: on a small host the sending thread's cost per datagram moves by a third between
// measurements (where the scheduler puts the receivers, what the trial left behind), and the anchor
// stands for what the stack allows.
RawUdpResult best_raw_udp(std::size_t datagram, std::size_t destinations, std::size_t run, double seconds,
                          std::size_t per_socket) {
  RawUdpResult best;
  for (int i = 0; i < 3; ++i) {
    const RawUdpResult r = measure_raw_udp(datagram, destinations, run, seconds, per_socket);
    if (r.gb_per_cpu_s() > best.gb_per_cpu_s()) best = r;
  }
  return best;
}

Trial run_trial(const ServeOptions& o, const fs::path& media, std::size_t peers, unsigned threads) {
  const auto start = std::chrono::steady_clock::now();
  // Several servers share the peers out (peer i to server i mod k), each on its own CPUs when pinned.
  // --max-rate (all sessions of a server together, 1 Gbit/s by default) is lifted: what is measured is
  // how many peers the server's CPU keeps up with, not the configured cap.
  const std::string sessions = std::to_string(peers / o.servers + peers / 4 + 16);
  std::vector<std::string> args{"--file",
                                media.string(),
                                "--listen",
                                "127.0.0.1:0",
                                "--metrics",
                                "127.0.0.1:0",
                                "--bitrate",
                                o.bitrate,
                                "--symbols",
                                std::to_string(o.n),
                                "--symbol-size",
                                std::to_string(o.symbol_size),
                                "--backend",
                                o.backend,
                                "--max-sessions",
                                sessions,
                                "--max-sessions-per-source",
                                "0",
                                "--stats-interval",
                                "0",
                                "--coded-cache-mb",
                                "64",
                                "--threads",
                                std::to_string(o.server_threads),
                                "--max-rate",
                                "1000G",
                                "--pacing-burst",
                                std::to_string(o.pacing_burst)};
  if (o.pacing_tick_us > 0) args.insert(args.end(), {"--pacing-tick-us", std::to_string(o.pacing_tick_us)});
  std::vector<std::unique_ptr<ServerProcess>> servers;
  swarm::SwarmOptions so;
  for (unsigned i = 0; i < o.servers; ++i) {
    servers.push_back(std::make_unique<ServerProcess>(
        o.server_bin, args, o.server_cpu < 0 ? -1 : o.server_cpu + static_cast<int>(i * o.server_threads),
        static_cast<int>(o.server_threads)));
    so.servers.push_back(servers.back()->address());
    so.metrics.push_back(servers.back()->metrics());
  }
  std::string engine = servers.front()->listening().value("engine", "?");
  so.spread = true;
  so.stream = media.filename().string();
  so.peers = peers;
  so.threads = threads;
  so.peers_per_socket = o.peers_per_socket;
  so.realtime_fraction = 1.0;
  so.verify_fraction = o.verify_fraction;
  so.loss = swarm::parse_loss(o.loss);
  // The server admits 2000 sessions a second: join a little slower than that.
  so.ramp_s = std::max(1.0, static_cast<double>(peers) / 1500.0);
  so.timeout_s = so.ramp_s + 3 * o.media_seconds + 30;
  so.per_peer = false;
  so.seed = peers;
  nlohmann::json result = swarm::run_swarm(so);
  const bool pass = result["ok"].get<bool>() && result["late_fraction"].get<double>() < o.late_limit;
  // The anchor: the same datagrams to as many destinations, in the runs a paced session sends them in
  // (its burst, one GSO message each); and, for scale, one datagram per message.
  const std::size_t datagram = proto::coded_packet_size(0, o.symbol_size);
  const RawUdpResult anchor = best_raw_udp(datagram, peers, o.anchor_run, o.anchor_seconds, o.peers_per_socket);
  const RawUdpResult single =
      o.anchor_run == 1 ? anchor : best_raw_udp(datagram, peers, 1, o.anchor_seconds, o.peers_per_socket);
  return {.peers = peers,
          .pass = pass,
          .swarm = std::move(result),
          .anchor = anchor,
          .single = single,
          .wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
          .engine = std::move(engine)};
}

Record record(const ServeOptions& o, const Trial& t, const std::string& engine) {
  const auto& s = t.swarm;
  Record r;
  r["bench"] = "serve";
  r["backend"] = engine.find("cuda") != std::string::npos ? "cuda" : "cpu";
  r["level"] = engine;
  r["peers"] = t.peers;
  r["servers"] = o.servers;
  r["server_threads"] = o.server_threads;
  if (o.pacing_tick_us > 0) r["pacing_tick_us"] = o.pacing_tick_us;
  r["pacing_burst"] = o.pacing_burst;
  r["bitrate"] = o.bitrate;
  r["n"] = o.n;
  r["symbol"] = o.symbol_size;
  r["loss"] = o.loss;
  r["pass"] = t.pass;
  r["verify_fraction"] = o.verify_fraction;
  r["verifying_peers"] = s["verifying_peers"];
  r["complete"] = s["complete"];
  r["failed"] = s["failed"];
  r["late_fraction"] = s["late_fraction"];
  r["server_cpu_per_peer"] = s["server_cpu_per_peer"];
  r["server_cpu_s_per_gb"] = s["server_cpu_s_per_gb"];
  r["goodput_mbit_s"] = s["goodput_mbit_s"];
  r["swarm_cpu_per_peer"] = s["swarm_cpu_per_peer"];
  r["peers_per_socket"] = o.peers_per_socket;
  // The coded send path: GB sent per second of server CPU.
  const double cpu_s_per_gb = s["server_cpu_s_per_gb"].is_number() ? s["server_cpu_s_per_gb"].get<double>() : 0.0;
  r["gb_per_s"] = cpu_s_per_gb > 0 ? 1.0 / cpu_s_per_gb : 0.0;
  r["anchor"] = "raw-udp";
  r["anchor_gb_per_s"] = t.anchor.gb_per_cpu_s();
  r["anchor_run"] = o.anchor_run;
  r["anchor_wall_gb_per_s"] = t.anchor.gb_per_wall_s();
  r["single_gb_per_s"] = t.single.gb_per_cpu_s();
  r["ratio_to_single"] = t.single.gb_per_cpu_s() > 0 ? r["gb_per_s"].get<double>() / t.single.gb_per_cpu_s() : 0.0;
  return r;
}

void plot(const ServeOptions& o, const std::vector<Trial>& trials, std::size_t best) {
  const fs::path png = o.plot;
  const fs::path dat = fs::path(png).replace_extension(".dat"), gp = fs::path(png).replace_extension(".gp");
  std::vector<const Trial*> sorted;
  sorted.reserve(trials.size());
  for (const auto& t : trials) sorted.push_back(&t);
  std::sort(sorted.begin(), sorted.end(), [](auto a, auto b) { return a->peers < b->peers; });
  {
    std::ofstream d(dat);
    d << "# peers late_percent server_cpu_percent_of_a_core pass\n";
    for (const auto* t : sorted) {
      const auto& s = t->swarm;
      const double cpu = s["server_cpu_per_peer"].is_number()
                             ? s["server_cpu_per_peer"].get<double>() * 100 * static_cast<double>(t->peers)
                             : 0;
      d << t->peers << ' ' << 100 * s["late_fraction"].get<double>() << ' ' << cpu << ' ' << (t->pass ? 1 : 0) << '\n';
    }
  }
  {
    std::ofstream g(gp);
    // Names relative to the script's folder, so that the script can be moved with its data and run again.
    g << "set terminal png size 900,560\nset output '" << png.filename().string() << "'\n"
      << "set title 'ncast-server on loopback: realtime peers at " << o.bitrate << " (n=" << o.n
      << ", L=" << o.symbol_size << "), largest passing: " << best << "'\n"
      << "set xlabel 'concurrent peers'\nset ylabel 'late segments (%)'\nset y2label 'server CPU (% of one core)'\n"
      << "set ytics nomirror\nset y2tics\nset grid\nset key top left\nset yrange [0:*]\nset y2range [0:*]\n"
      << "set arrow from graph 0, first " << 100 * o.late_limit << " to graph 1, first " << 100 * o.late_limit
      << " nohead dashtype 2\n"
      << "plot '" << dat.filename().string() << "' using 1:2 with linespoints title 'late segments', '"
      << dat.filename().string() << "' using 1:3 axes x1y2 with linespoints title 'server CPU'\n";
  }
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) {
    std::cerr << "ncast-bench serve: gnuplot not found (tools/install-deps.sh installs gnuplot-nox); data in " << dat
              << ", script in " << gp << "\n";
    return;
  }
  const fs::path folder = gp.has_parent_path() ? gp.parent_path() : fs::path(".");
  const std::string cmd = "cd '" + folder.string() + "' && gnuplot '" + gp.filename().string() + "'";
  if (std::system(cmd.c_str()) != 0) std::cerr << "ncast-bench serve: gnuplot failed on " << gp << "\n";
  else std::cerr << "ncast-bench serve: plot in " << png << "\n";
}

void add_serve_options(po::options_description& desc, ServeOptions& o) {
  desc.add_options()("bitrate", po::value(&o.bitrate)->default_value(o.bitrate),
                     "the stream's bitrate; every peer plays at it")(
      "media-seconds", po::value(&o.media_seconds)->default_value(o.media_seconds),
      "length of the stream at that bitrate")("symbols", po::value(&o.n)->default_value(o.n),
                                              "source symbols per segment")(
      "symbol-size", po::value(&o.symbol_size)->default_value(o.symbol_size),
      "octets per symbol (1024: a coded packet fits 1232 octets)")("start", po::value(&o.start)->default_value(o.start),
                                                                   "peers in the first trial")(
      "max", po::value(&o.max)->default_value(o.max), "peers at most")(
      "budget", po::value(&o.budget_s)->default_value(o.budget_s),
      "seconds for the whole search; no trial starts that would overrun it")(
      "precision", po::value(&o.precision)->default_value(o.precision, cli::shortest(o.precision)),
      "stop bisecting when the bracket is narrower than this fraction")(
      "late-limit", po::value(&o.late_limit)->default_value(o.late_limit),
      "a trial fails at this fraction of late segments or more")("threads", po::value(&o.threads)->default_value(0),
                                                                 "swarm worker threads (0: cores − 1, at least 1)")(
      "loss", po::value(&o.loss)->default_value(o.loss), "each peer's simulated loss (ncast-swarm --loss)")(
      "peers-per-socket", po::value(&o.peers_per_socket)->default_value(o.peers_per_socket),
      "simulated peers (and anchor destinations) sharing a UDP socket, each with a 127/8 address of its own "
      "(ncast-swarm --peers-per-socket; 1: a socket each)")(
      "verify-fraction", po::value(&o.verify_fraction)->default_value(o.verify_fraction),
      "peers that decode and verify; the others count ranks (ncast-swarm --verify-fraction)")(
      "backend", po::value(&o.backend)->default_value(o.backend), "the server's coding engine: auto, cpu or cuda")(
      "server-bin", po::value(&o.server_bin), "ncast-server to run (default: the one of this build tree)")(
      "servers", po::value(&o.servers)->default_value(1),
      "server processes sharing the peers out (peer i to server i mod k)")(
      "server-threads", po::value(&o.server_threads)->default_value(1),
      "ncast-server --threads of each server process")("pacing-tick-us", po::value(&o.pacing_tick_us)->default_value(0),
                                                       "ncast-server --pacing-tick-us (0: the server's default)")(
      "pacing-burst", po::value(&o.pacing_burst)->default_value(o.pacing_burst), "ncast-server --pacing-burst")(
      "server-cpu", po::value(&o.server_cpu)->default_value(-1),
      "pin server i to CPUs server-cpu + i·T .. + T−1, T = --server-threads (-1: do not); --cpu pins the swarm")(
      "anchor-seconds", po::value(&o.anchor_seconds)->default_value(o.anchor_seconds),
      "measuring time of each raw UDP anchor (the best of three such is kept)")(
      "anchor-run", po::value(&o.anchor_run)->default_value(o.anchor_run),
      "datagrams in a row to one destination in the anchor (runs > 1 become UDP GSO sends; 0: --pacing-burst)")(
      "plot", po::value(&o.plot),
      "draw peers against late segments and server CPU into this PNG (gnuplot; .dat and .gp beside it)");
}

// Throws cli::UsageError for a value out of range; resolves --anchor-run 0 to the pacing burst.
void check_serve_options(ServeOptions& o, double bitrate) {
  if (!(bitrate >= 8000)) throw cli::UsageError("--bitrate must be at least 8k");
  if (!(o.media_seconds > 0) || !(o.budget_s > 0) || !(o.anchor_seconds > 0))
    throw cli::UsageError("times must be positive");
  if (o.start < 1 || o.max < o.start) throw cli::UsageError("want 1 <= --start <= --max");
  if (!(o.precision > 0) || !(o.late_limit > 0 && o.late_limit < 1))
    throw cli::UsageError("--precision and --late-limit must be in (0, 1)");
  if (o.n < 1 || o.n > 256) throw cli::UsageError("--symbols must be 1..256");
  if (!(o.verify_fraction > 0 && o.verify_fraction <= 1)) throw cli::UsageError("--verify-fraction must be in (0, 1]");
  if (o.pacing_burst < 1 || o.pacing_burst > 32) throw cli::UsageError("--pacing-burst must be 1..32");
  if (o.anchor_run == 0) o.anchor_run = o.pacing_burst;
  if (o.anchor_run > 64) throw cli::UsageError("--anchor-run must be 0..64");
  if (o.servers < 1 || o.servers > 256) throw cli::UsageError("--servers must be 1..256");
  if (o.peers_per_socket < 1 || o.peers_per_socket > 4096) throw cli::UsageError("--peers-per-socket must be 1..4096");
  if (o.server_threads < 1 || o.server_threads > 256) throw cli::UsageError("--server-threads must be 1..256");
  if (o.pacing_tick_us > 100000) throw cli::UsageError("--pacing-tick-us must be 0..100000");
  if (proto::coded_packet_size(0, o.symbol_size) > proto::kMinDatagram)
    throw cli::UsageError("--symbol-size must keep coded packets within 1232 octets");
  swarm::parse_loss(o.loss);
}

// A trial holds a socket per group of peers (per peer with --peers-per-socket 1), and then the anchor
// as many: the search stops below the hard descriptor limit rather than fail there.
void cap_at_descriptor_limit(ServeOptions& o, unsigned threads) {
  rlimit r{};
  if (::getrlimit(RLIMIT_NOFILE, &r) != 0 || r.rlim_max == RLIM_INFINITY) return;
  swarm::SwarmOptions so;
  so.servers = {net::Address::parse("127.0.0.1:1")};  // the trials' servers: IPv4 loopback
  so.threads = threads;
  so.peers_per_socket = o.peers_per_socket;
  auto fits = [&](std::size_t peers) { return swarm::descriptors_needed(so, peers) <= r.rlim_max; };
  if (fits(o.max)) return;
  std::size_t lo = 0, hi = o.max;  // fits(lo), !fits(hi)
  while (hi - lo > 1) (fits((lo + hi) / 2) ? lo : hi) = (lo + hi) / 2;
  o.max = std::max<std::size_t>(o.start, lo);
  std::cerr << "ncast-bench serve: at most " << o.max << " peers, for the descriptor limit of " << r.rlim_max
            << " (ulimit -Hn) with " << o.peers_per_socket << " peers per socket\n";
}

// media_seconds of random bytes at the bitrate, as the file the servers stream.
fs::path write_media(const TempDir& dir, const ServeOptions& o, double bitrate, std::uint64_t seed) {
  fs::path media = dir.path() / "media";
  const std::size_t bytes = static_cast<std::size_t>(o.media_seconds * bitrate / 8);
  const auto data = random_bytes(std::max<std::size_t>(bytes, 1), seed);
  std::ofstream out(media, std::ios::binary);
  out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
  if (!out) throw std::runtime_error("cannot write the test media in " + dir.path().string());
  return media;
}

// The search: double until a trial fails, then bisect between the largest passing and the smallest
// failing peer count.
struct Search {
  std::optional<std::size_t> lo, hi;  // largest passing, smallest failing

  void record(const Trial& t) {
    if (t.pass) lo = std::max(lo.value_or(0), t.peers);
    else hi = std::min(hi.value_or(t.peers), t.peers);
  }
  // The peer count of the next trial after one of `peers`; 0 when the search is done.
  std::size_t next(std::size_t peers, const ServeOptions& o, const std::vector<Trial>& trials) const {
    if (!hi) return peers >= o.max ? 0 : std::min(o.max, peers * 2);
    if (!lo) {
      const std::size_t below = peers > 1 ? peers / 2 : 0;  // even the first failed: look below
      const bool tried = std::any_of(trials.begin(), trials.end(), [&](const Trial& x) { return x.peers == below; });
      return below > 0 && tried ? 0 : below;
    }
    if (static_cast<double>(*hi - *lo) > o.precision * static_cast<double>(*lo) && *hi - *lo > 1)
      return (*lo + *hi) / 2;
    return 0;
  }
};

Record summary_record(const ServeOptions& o, const std::vector<Trial>& trials, const std::string& engine,
                      const Search& search, double search_s) {
  const std::size_t best = search.lo.value_or(0);
  const Trial* at_best = nullptr;
  for (const auto& t : trials)
    if (t.peers == best && t.pass) at_best = &t;
  Record summary;
  summary["bench"] = "serve-max";
  summary["backend"] = engine.find("cuda") != std::string::npos ? "cuda" : "cpu";
  summary["level"] = engine;
  summary["bitrate"] = o.bitrate;
  summary["symbol"] = o.symbol_size;
  summary["loss"] = o.loss;
  summary["servers"] = o.servers;
  summary["server_threads"] = o.server_threads;
  summary["max_peers"] = best;
  summary["bracket_fail"] = search.hi ? nlohmann::json(*search.hi) : nlohmann::json(nullptr);
  summary["trials"] = trials.size();
  summary["search_s"] = search_s;
  if (!at_best) {
    summary["gb_per_s"] = 0.0;
    return summary;
  }
  summary["server_cpu_per_peer"] = at_best->swarm["server_cpu_per_peer"];
  summary["late_fraction"] = at_best->swarm["late_fraction"];
  const Record r = record(o, *at_best, engine);
  summary["gb_per_s"] = r["gb_per_s"];
  summary["anchor"] = "raw-udp";
  summary["anchor_gb_per_s"] = r["anchor_gb_per_s"];
  summary["single_gb_per_s"] = r["single_gb_per_s"];
  summary["ratio_to_single"] = r["ratio_to_single"];
  return summary;
}

}  // namespace

int run_serve(int argc, char** argv) {
  ServeOptions o;
  CommonOptions common;
  po::options_description desc("ncast-bench serve options");
  add_serve_options(desc, o);
  add_common_options(desc, common);
  if (!parse_options(argc, argv, "usage: ncast-bench serve [options]", desc, common)) return 0;
  if (o.server_bin.empty()) o.server_bin = default_server_binary();
  const double bitrate = cli::parse_rate(o.bitrate);
  check_serve_options(o, bitrate);
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const unsigned threads = o.threads ? o.threads : std::max(1u, cores - 1);
  cap_at_descriptor_limit(o, threads);

  TempDir dir;
  const fs::path media = write_media(dir, o, bitrate, common.seed);
  Reporter reporter(common);
  std::vector<Trial> trials;
  std::string engine = "?";
  const auto begin = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count(); };
  Search search;
  std::size_t peers = o.start;
  double last_trial_s = 0;
  while (peers > 0) {
    // A trial takes about the stream's length plus the ramp; do not start one that would overrun.
    const double expected = std::max(last_trial_s, o.media_seconds + 5);
    if (!trials.empty() && elapsed() + expected > o.budget_s) break;
    Trial t = run_trial(o, media, peers, threads);
    last_trial_s = t.wall_s;
    trials.push_back(t);
    engine = t.engine;
    Record r = record(o, t, engine);
    reporter.emit(r);
    search.record(t);
    peers = search.next(peers, o, trials);
  }
  Record summary = summary_record(o, trials, engine, search, elapsed());
  reporter.emit(summary);
  if (!o.plot.empty()) plot(o, trials, search.lo.value_or(0));
  return 0;
}

}  // namespace ncast::bench
