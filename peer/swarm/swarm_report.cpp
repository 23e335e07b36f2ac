#include "peer/swarm/swarm_report.hpp"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>

namespace ncast::swarm {
namespace {

double metric(const std::map<std::string, double>& m, const std::string& name) {
  const auto it = m.find(name);
  return it == m.end() ? 0.0 : it->second;
}

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0.0 : s / static_cast<double>(v.size());
}

nlohmann::json distribution(std::vector<double> v) {
  if (v.empty()) return nullptr;
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (double x : v) sum += x;
  auto at = [&](double q) {
    return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())))];
  };
  return {{"mean", sum / static_cast<double>(v.size())}, {"p50", at(0.5)}, {"p95", at(0.95)}, {"max", v.back()}};
}

// Sums over the peers' reports.
struct PeerTotals {
  std::size_t peers = 0, complete = 0, failed = 0, left = 0, realtime = 0;
  // Verifying peers (decode, SHA-256) and counting ones (ranks only); those of each that completed,
  // a verifying one with every segment verified.
  std::size_t verifying = 0, counting = 0, verifying_complete = 0, counting_complete = 0;
  std::uint64_t segments_verified = 0;
  std::uint64_t segments = 0, late = 0, stalls = 0, symbols = 0, arrived = 0, lost = 0, datagrams_lost = 0, needed = 0,
                non_innovative = 0, hash_failures = 0, bad = 0, rejoins = 0, bytes = 0;
  double stall_s = 0;
  std::uint64_t realtime_segments = 0, realtime_late = 0;    // over the realtime peers that did not leave
  std::uint64_t complete_received = 0, complete_needed = 0;  // over the peers that completed
  std::vector<double> completion, first;                     // the times, where there is one
  std::vector<double> arrived_ratio, received_ratio;         // per source symbol, over the peers that completed
  std::map<std::string, std::size_t> failures;               // failed peers by their failure

  void add(const nlohmann::json& p) {
    const std::string status = p["status"];
    const bool realtime_peer = p["mode"] == "realtime";
    ++peers;
    realtime += realtime_peer;
    complete += status == "complete";
    failed += status == "failed";
    left += status == "left";
    if (status == "failed") ++failures[p.value("failure", "(no reason given)")];
    add_counts(p);
    if (realtime_peer && status != "left") {
      realtime_segments += p["segments"].get<std::uint64_t>();
      realtime_late += p["late_segments"].get<std::uint64_t>();
    }
    if (!p["time_to_first_segment_s"].is_null()) first.push_back(p["time_to_first_segment_s"]);
    if (status == "complete") add_completed(p);
    add_kind(p, status == "complete");
  }

 private:
  void add_counts(const nlohmann::json& p) {
    segments += p["segments"].get<std::uint64_t>();
    late += p["late_segments"].get<std::uint64_t>();
    stalls += p["stalls"].get<std::uint64_t>();
    stall_s += p["stall_s"].get<double>();
    symbols += p["symbols_received"].get<std::uint64_t>();
    arrived += p["symbols_arrived"].get<std::uint64_t>();
    lost += p["symbols_lost"].get<std::uint64_t>();
    datagrams_lost += p["datagrams_lost"].get<std::uint64_t>();
    needed += p["symbols_needed"].get<std::uint64_t>();
    non_innovative += p["non_innovative"].get<std::uint64_t>();
    hash_failures += p["hash_failures"].get<std::uint64_t>();
    bad += p["bad_packets"].get<std::uint64_t>();
    rejoins += p["rejoins"].get<std::uint64_t>();
    bytes += p["bytes"].get<std::uint64_t>();
  }

  void add_kind(const nlohmann::json& p, bool completed) {
    const auto verified = p["segments_verified"].get<std::uint64_t>();
    segments_verified += verified;
    if (!p["verifies"].get<bool>()) {
      ++counting;
      counting_complete += completed;
      return;
    }
    ++verifying;
    verifying_complete += completed && verified == p["segments"].get<std::uint64_t>();
  }

  void add_completed(const nlohmann::json& p) {
    completion.push_back(p["completion_s"]);
    complete_needed += p["symbols_needed"].get<std::uint64_t>();
    complete_received += p["symbols_received"].get<std::uint64_t>();
    const double n = p["symbols_needed"].get<double>();
    if (n > 0) {
      arrived_ratio.push_back(p["symbols_arrived"].get<double>() / n);
      received_ratio.push_back(p["symbols_received"].get<double>() / n);
    }
  }
};

void describe_conditions(nlohmann::json& j, const SwarmOptions& o) {
  j["event"] = "swarm";
  j["stream"] = o.stream;
  j["loss_model"] = o.loss.describe();
  j["loss_scope"] = o.loss_shared ? "shared" : "peer";
  j["loss_mean"] = o.loss.mean_loss();
  j["loss_slot_ms"] = std::chrono::duration<double, std::milli>(o.loss_slot).count();
  j["delay_ms"] = std::chrono::duration<double, std::milli>(o.delay).count();
  j["jitter_ms"] = std::chrono::duration<double, std::milli>(o.jitter).count();
  j["threads"] = o.threads;
  j["verify_fraction"] = o.verify_fraction;
  j["server_mode"] = o.spread ? "spread" : "all";
}

void report_totals(nlohmann::json& j, const PeerTotals& t, double wall_s) {
  j["peers"] = t.peers;
  j["realtime"] = t.realtime;
  j["complete"] = t.complete;
  j["failed"] = t.failed;
  j["left"] = t.left;
  j["failures"] = t.failures;
  j["ok"] = t.failed == 0 && t.complete + t.left == t.peers && t.complete > 0 && t.hash_failures == 0;
  j["verifying_peers"] = t.verifying;
  j["counting_peers"] = t.counting;
  j["verifying_complete"] = t.verifying_complete;
  j["counting_complete"] = t.counting_complete;
  j["segments"] = t.segments;
  j["segments_verified"] = t.segments_verified;
  j["late_segments"] = t.late;
  j["late_fraction"] =
      t.realtime_segments ? static_cast<double>(t.realtime_late) / static_cast<double>(t.realtime_segments) : 0.0;
  j["stalls"] = t.stalls;
  j["stall_s"] = t.stall_s;
  j["completion_s"] = distribution(t.completion);
  j["time_to_first_segment_s"] = distribution(t.first);
  j["symbols_received"] = t.symbols;
  j["symbols_arrived"] = t.arrived;
  j["symbols_lost"] = t.lost;
  j["datagrams_lost"] = t.datagrams_lost;
  j["symbols_needed"] = t.needed;
  j["non_innovative"] = t.non_innovative;
  j["hash_failures"] = t.hash_failures;
  j["bad_packets"] = t.bad;
  j["rejoins"] = t.rejoins;
  j["loss_observed"] = t.arrived ? static_cast<double>(t.lost) / static_cast<double>(t.arrived) : 0.0;
  j["bytes"] = t.bytes;
  j["goodput_mbit_s"] = wall_s > 0 ? 8e-6 * static_cast<double>(t.bytes) / wall_s : 0.0;
}

// Over the peers that completed: what reached them (before the simulated loss) and what the decoder
// got (after it), per source symbol, against 1 / (1 − mean loss).
void report_symbols_per_needed(nlohmann::json& j, const PeerTotals& t, double mean_loss) {
  const double implied = 1.0 / (1.0 - mean_loss);
  j["arrived_per_needed"] = mean(t.arrived_ratio);
  j["received_per_needed"] = mean(t.received_ratio);
  j["implied_per_needed"] = implied;
  j["arrived_vs_implied"] = t.arrived_ratio.empty() ? 0.0 : mean(t.arrived_ratio) / implied - 1.0;
  j["overhead"] =
      t.complete_needed ? static_cast<double>(t.complete_received) / static_cast<double>(t.complete_needed) : 0.0;
}

// The servers' CPU time and bytes sent during the run, summed over those whose /metrics were read.
struct CostSum {
  double cpu = 0, sent = 0;
  bool all_read = true;
};

nlohmann::json server_cost(const net::Address& endpoint, const ServerCost& c, CostSum& sum) {
  nlohmann::json s{{"metrics", endpoint.to_string()}};
  if (!c.before || !c.after) {
    s["error"] = "could not read /metrics";
    sum.all_read = false;
    return s;
  }
  const double cpu = metric(*c.after, "process_cpu_seconds_total") - metric(*c.before, "process_cpu_seconds_total");
  const double sent = metric(*c.after, "ncast_sent_bytes_total") - metric(*c.before, "ncast_sent_bytes_total");
  s["cpu_s"] = cpu;
  s["sent_bytes"] = sent;
  s["cpu_s_per_gb"] = sent > 0 ? cpu / (sent / 1e9) : 0.0;
  s["sessions_created"] =
      metric(*c.after, "ncast_sessions_created_total") - metric(*c.before, "ncast_sessions_created_total");
  sum.cpu += cpu;
  sum.sent += sent;
  return s;
}

void report_server_costs(nlohmann::json& j, const SwarmOptions& o, const std::vector<ServerCost>& costs, double wall_s,
                         std::size_t stayed) {
  nlohmann::json servers = nlohmann::json::array();
  CostSum sum;
  sum.all_read = !costs.empty();
  for (std::size_t i = 0; i < costs.size(); ++i) servers.push_back(server_cost(o.metrics[i], costs[i], sum));
  // null unless every server's /metrics were read, and where the value means nothing
  const auto known = [&](bool usable, double value) {
    return sum.all_read && usable ? nlohmann::json(value) : nlohmann::json(nullptr);
  };
  j["servers"] = servers;
  j["server_cpu_s"] = known(true, sum.cpu);
  j["server_sent_bytes"] = known(true, sum.sent);
  j["server_cpu_s_per_gb"] = known(sum.sent > 0, sum.cpu / (sum.sent / 1e9));
  j["server_cpu_per_peer"] = known(wall_s > 0 && stayed > 0, sum.cpu / wall_s / static_cast<double>(stayed));
}

}  // namespace

nlohmann::json swarm_report(const SwarmOptions& o, RunRecord&& run, nlohmann::json decoder) {
  std::sort(run.peers.begin(), run.peers.end(), [](const auto& a, const auto& b) { return a["id"] < b["id"]; });
  PeerTotals totals;
  for (const auto& p : run.peers) totals.add(p);
  nlohmann::json j;
  describe_conditions(j, o);
  j["wall_s"] = run.wall_s;
  j["decoder"] = std::move(decoder);
  j["swarm_cpu_s"] = run.cpu_s;
  // Of one core, per peer: what a simulated peer costs the host that runs the swarm.
  j["swarm_cpu_per_peer"] =
      run.wall_s > 0 && totals.peers > 0 ? run.cpu_s / run.wall_s / static_cast<double>(totals.peers) : 0.0;
  j["peers_per_socket"] = o.peers_per_socket;
  report_totals(j, totals, run.wall_s);
  j["partial"] = !run.partial.empty();
  if (!run.partial.empty()) {
    j["partial_reason"] = run.partial;
    j["ok"] = false;
  }
  report_symbols_per_needed(j, totals, o.loss.mean_loss());
  report_server_costs(j, o, run.costs, run.wall_s, totals.peers - totals.left);
  if (o.per_peer) j["per_peer"] = std::move(run.peers);
  return j;
}

}  // namespace ncast::swarm
