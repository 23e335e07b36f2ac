// ncast-swarm: many simulated ncast peers in one process, with emulated loss, delay, jitter and churn.
#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <utility>
#include <vector>

#include "cli/interrupt.hpp"
#include "cli/subcommands.hpp"
#include "peer/swarm/swarm_options.hpp"

namespace {

using ncast::swarm::SwarmProgress;
using Json = nlohmann::json;

void progress_line(const SwarmProgress& p, std::uint64_t& last_bytes, double& last_s) {
  const double dt = p.elapsed_s - last_s;
  const double rate = dt > 0 ? 8e-6 * static_cast<double>(p.bytes - last_bytes) / dt : 0.0;
  last_bytes = p.bytes;
  last_s = p.elapsed_s;
  const double loss = p.arrived ? 100.0 * static_cast<double>(p.lost) / static_cast<double>(p.arrived) : 0.0;
  // Symbols the decoders got per source symbol of the segments written so far.
  const double overhead = p.needed ? static_cast<double>(p.symbols) / static_cast<double>(p.needed) : 0.0;
  std::fprintf(
      stderr,
      "\r%7.1f s  peers %zu: %zu running, %zu done, %zu failed, %zu left  %8.1f Mbit/s  loss %4.1f %%  overhead %.3f  ",
      p.elapsed_s, p.started, p.running, p.complete, p.failed, p.left, rate, loss, overhead);
  std::fflush(stderr);
}

std::string number(const Json& v, int precision = 3) {
  if (v.is_null()) return "-";
  char b[64];
  if (v.is_number_float()) std::snprintf(b, sizeof b, "%.*f", precision, v.get<double>());
  else std::snprintf(b, sizeof b, "%s", v.dump().c_str());
  return b;
}

// The failed peers' reasons, the commonest first.
void failures(const Json& r) {
  std::vector<std::pair<std::size_t, std::string>> reasons;
  for (const auto& [why, count] : r["failures"].items()) reasons.emplace_back(count.get<std::size_t>(), why);
  std::sort(reasons.begin(), reasons.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  const char* label = "failed because";
  for (const auto& [count, why] : reasons) {
    std::printf("%-28s %zu × %s\n", label, count, why.c_str());
    label = "";
  }
}

void table(const Json& r) {
  if (r["partial"].get<bool>())
    std::printf("%-28s %s: the peers still running then failed\n", "PARTIAL RUN",
                r["partial_reason"].get<std::string>().c_str());
  std::printf("%-28s %s\n", "peers (realtime)", (number(r["peers"]) + " (" + number(r["realtime"]) + ")").c_str());
  std::printf("%-28s %s complete, %s failed, %s left\n", "outcome", number(r["complete"]).c_str(),
              number(r["failed"]).c_str(), number(r["left"]).c_str());
  failures(r);
  std::printf("%-28s %s (%s)\n", "loss model (scope)", r["loss_model"].get<std::string>().c_str(),
              r["loss_scope"].get<std::string>().c_str());
  std::printf("%-28s %s verifying (%s complete, every segment verified), %s counting ranks only (%s complete)\n",
              "peers by kind", number(r["verifying_peers"]).c_str(), number(r["verifying_complete"]).c_str(),
              number(r["counting_peers"]).c_str(), number(r["counting_complete"]).c_str());
  std::printf("%-28s %s (%s verified), %s late (%.3f %% of realtime), %s s stalled\n", "segments",
              number(r["segments"]).c_str(), number(r["segments_verified"]).c_str(), number(r["late_segments"]).c_str(),
              100 * r["late_fraction"].get<double>(), number(r["stall_s"], 2).c_str());
  std::printf("%-28s %-10s %-10s %-10s %-10s\n", "", "mean", "p50", "p95", "max");
  for (const char* key : {"time_to_first_segment_s", "completion_s"}) {
    const Json& d = r[key];
    if (d.is_null()) continue;
    std::printf("%-28s %-10s %-10s %-10s %-10s\n", key, number(d["mean"]).c_str(), number(d["p50"]).c_str(),
                number(d["p95"]).c_str(), number(d["max"]).c_str());
  }
  std::printf("%-28s %s arrived, %s lost, %s received, %s needed, %s non-innovative\n", "symbols",
              number(r["symbols_arrived"]).c_str(), number(r["symbols_lost"]).c_str(),
              number(r["symbols_received"]).c_str(), number(r["symbols_needed"]).c_str(),
              number(r["non_innovative"]).c_str());
  std::printf("%-28s %s arrived, %s received (loss implies %s arrived: %+.2f %%)\n", "per needed symbol",
              number(r["arrived_per_needed"], 4).c_str(), number(r["received_per_needed"], 4).c_str(),
              number(r["implied_per_needed"], 4).c_str(), 100 * r["arrived_vs_implied"].get<double>());
  std::printf("%-28s %s Mbit/s over %s s\n", "goodput", number(r["goodput_mbit_s"], 1).c_str(),
              number(r["wall_s"], 1).c_str());
  const Json& d = r["decoder"];
  if (d.contains("batches"))
    std::printf("%-28s %s: %s batches, %s segments a batch, %s s on the GPU, latency %s ms mean, %s max\n", "decoder",
                d["description"].get<std::string>().c_str(), number(d["batches"]).c_str(),
                number(d["generations_per_batch"], 1).c_str(), number(d["gpu_decode_s"], 3).c_str(),
                number(d["latency_ms"]["mean"], 2).c_str(), number(d["latency_ms"]["max"], 2).c_str());
  else
    std::printf("%-28s %s%s\n", "decoder", d["description"].get<std::string>().c_str(),
                d.contains("why_cpu") ? (" (" + d["why_cpu"].get<std::string>() + ")").c_str() : "");
  std::printf("%-28s %s CPU-s\n", "swarm cost", number(r["swarm_cpu_s"], 2).c_str());
  std::printf("%-28s %s CPU-s per GB sent, %s of a core per peer\n", "server cost",
              number(r["server_cpu_s_per_gb"], 2).c_str(), number(r["server_cpu_per_peer"], 6).c_str());
  std::printf("%-28s %s\n", "all complete and verified", r["ok"].get<bool>() ? "yes" : "NO");
}

}  // namespace

int main(int argc, char** argv) {
  ncast::swarm::ParsedSwarmOptions parsed;
  try {
    parsed = ncast::swarm::parse_swarm_options(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "ncast-swarm: " << e.what() << "\n";
    return 2;
  }
  if (parsed.action != ncast::cli::Action::run) {
    std::cout << parsed.text;
    return 0;
  }
  // Ctrl-C or SIGTERM ends the run early with a report, marked partial.
  ncast::cli::catch_interrupts();
  parsed.options.stop_reason = [] {
    const int sig = ncast::cli::interrupt_signal();
    return sig == 0 ? std::string() : std::string("interrupted by ") + (sig == SIGINT ? "SIGINT" : "SIGTERM");
  };
  std::uint64_t last_bytes = 0;
  double last_s = 0;
  if (parsed.progress)
    parsed.options.on_progress = [&](const SwarmProgress& p) { progress_line(p, last_bytes, last_s); };
  try {
    const Json report = ncast::swarm::run_swarm(parsed.options);
    if (parsed.progress) std::fputc('\n', stderr);
    if (parsed.json) std::cout << report.dump() << "\n";
    else table(report);
    if (!parsed.report_path.empty()) {
      std::ofstream out(parsed.report_path);
      out << report.dump() << "\n";
      if (!out) {
        std::cerr << "ncast-swarm: cannot write the report to " << parsed.report_path << ": " << std::strerror(errno)
                  << "\n";
        return 1;
      }
    }
    if (report["partial"].get<bool>()) return ncast::cli::kExitInterrupted;
    return report["ok"].get<bool>() ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "ncast-swarm: " << e.what() << "\n";
    return 1;
  }
}
