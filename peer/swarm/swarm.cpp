#include "peer/swarm/swarm.hpp"

#include <sys/resource.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <future>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <thread>

#include "peer/decoder_factory.hpp"
#include "peer/swarm/metrics_scrape.hpp"
#include "peer/swarm/sim_peer.hpp"

namespace ncast::swarm {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
constexpr auto kTick = 10ms;
constexpr int kSnapshotEvery = 5;  // ticks between counter snapshots for the calling thread

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// What a worker publishes for the calling thread, each snapshot self-consistent.
struct Snapshot {
  std::size_t handled = 0;  // start and churn requests carried out
  std::size_t running = 0, complete = 0, failed = 0, left = 0;
  std::uint64_t symbols = 0, arrived = 0, lost = 0, bytes = 0, needed = 0;
};

class Worker {
 public:
  explicit Worker(std::uint16_t max_datagram)
      : scratch_(max_datagram), ready_(io_), tick_timer_(io_), guard_(io_.get_executor()) {}

  void run() {
    thread_ = std::thread([this] {
      tick();
      io_.run();
    });
  }

  // Starts a peer made by make (on this worker's thread, with its io_context and scratch).
  void add(std::function<std::unique_ptr<SimPeer>(asio::io_context&, RxScratch&, ReadySet&)> make) {
    asio::post(io_, [this, make = std::move(make)] {
      peers_.push_back(make(io_, scratch_, ready_));
      peers_.back()->start(Clock::now());
      ++handled_;
    });
  }

  // Churn: a random running peer leaves, and make starts its replacement.
  void churn(std::uint64_t pick, bool polite,
             std::function<std::unique_ptr<SimPeer>(asio::io_context&, RxScratch&, ReadySet&)> make) {
    asio::post(io_, [this, pick, polite, make = std::move(make)] {
      std::vector<SimPeer*> running;
      for (auto& p : peers_)
        if (p->status() == SimPeer::Status::running) running.push_back(p.get());
      if (!running.empty()) {
        running[pick % running.size()]->leave(polite, Clock::now());
        peers_.push_back(make(io_, scratch_, ready_));
        peers_.back()->start(Clock::now());
      }
      ++handled_;
    });
  }

  // Ends the run: peers still running fail with why; returns every peer's report.
  std::future<std::vector<nlohmann::json>> finish(std::string why) {
    auto promise = std::make_shared<std::promise<std::vector<nlohmann::json>>>();
    auto future = promise->get_future();
    asio::post(io_, [this, why = std::move(why), promise] {
      const auto now = Clock::now();
      std::vector<nlohmann::json> reports;
      for (auto& p : peers_) {
        p->give_up(why, now);
        reports.push_back(p->report());
      }
      stopping_ = true;
      tick_timer_.cancel();
      ready_.close();
      guard_.reset();
      promise->set_value(std::move(reports));
    });
    return future;
  }

  void join() {
    if (thread_.joinable()) thread_.join();
    peers_.clear();
  }

  Snapshot snapshot() {
    std::lock_guard lock(mutex_);
    return snapshot_;
  }

 private:
  void tick() {
    if (stopping_) return;
    const auto now = Clock::now();
    for (auto& p : peers_) p->poll(now);
    if (++ticks_ % kSnapshotEvery == 0) publish();
    tick_timer_.expires_after(kTick);
    tick_timer_.async_wait([this](const boost::system::error_code& ec) {
      if (!ec) tick();
    });
  }

  void publish() {
    Snapshot s;
    s.handled = handled_;
    for (const auto& p : peers_) {
      switch (p->status()) {
        case SimPeer::Status::running: ++s.running; break;
        case SimPeer::Status::complete: ++s.complete; break;
        case SimPeer::Status::failed: ++s.failed; break;
        case SimPeer::Status::left: ++s.left; break;
      }
      s.symbols += p->symbols_received();
      s.arrived += p->coded_arrived();
      s.lost += p->datagrams_lost();
      s.bytes += p->bytes_written();
      s.needed += p->symbols_needed();
    }
    std::lock_guard lock(mutex_);
    snapshot_ = s;
  }

  asio::io_context io_;
  RxScratch scratch_;
  ReadySet ready_;
  asio::steady_timer tick_timer_;
  asio::executor_work_guard<asio::io_context::executor_type> guard_;
  std::vector<std::unique_ptr<SimPeer>> peers_;
  std::size_t handled_ = 0;
  std::uint64_t ticks_ = 0;
  bool stopping_ = false;
  std::thread thread_;
  std::mutex mutex_;
  Snapshot snapshot_;
};

// Lets the process hold a socket per peer.
void raise_descriptor_limit(std::size_t peers) {
  rlimit r{};
  if (::getrlimit(RLIMIT_NOFILE, &r) != 0) return;
  const rlim_t want = static_cast<rlim_t>(peers) + 256;
  if (r.rlim_cur >= want) return;
  r.rlim_cur = std::min(want, r.rlim_max);
  ::setrlimit(RLIMIT_NOFILE, &r);
  ::getrlimit(RLIMIT_NOFILE, &r);
  if (r.rlim_cur < want)
    throw std::invalid_argument(std::to_string(peers) + " peers need " + std::to_string(want) +
                                " file descriptors; the limit is " + std::to_string(r.rlim_cur) + " (ulimit -n)");
}

// How the swarm decodes, chosen before any peer starts.
struct Decoding {
  std::shared_ptr<peer::DecodeBatcher> batcher;  // null: every peer on the CPU, alone
  std::string why_cpu;                           // auto chose the CPU: why
};

Decoding choose_decoding(const SwarmOptions& o) {
  if (o.batcher) return {o.batcher, {}};
  switch (o.decoder) {
    case peer::DecoderChoice::cpu: return {};
    case peer::DecoderChoice::gpu: return {peer::make_gpu_decode_batcher(o.batch), {}};
    case peer::DecoderChoice::automatic: break;
  }
  if (o.peers < kAutoGpuPeers) return {nullptr, "fewer than " + std::to_string(kAutoGpuPeers) + " peers"};
  try {
    return {peer::make_gpu_decode_batcher(o.batch), {}};
  } catch (const std::exception& e) {
    return {nullptr, e.what()};
  }
}

nlohmann::json describe(const SwarmOptions& o, const Decoding& d) {
  nlohmann::json j{{"requested", peer::to_string(o.decoder)}};
  if (!d.batcher) {
    j["ran"] = "cpu";
    j["description"] = peer::make_cpu_decoder_factory()->description();
    if (!d.why_cpu.empty()) j["why_cpu"] = d.why_cpu;
    return j;
  }
  const peer::BatchStats s = d.batcher->stats();
  j["ran"] = d.batcher->backend().description().rfind("gpu", 0) == 0 ? "gpu-batched" : "host-batched";
  j["description"] = d.batcher->description();
  j["max_batch"] = d.batcher->options().max_batch;
  j["max_wait_ms"] = std::chrono::duration<double, std::milli>(d.batcher->options().max_wait).count();
  j["batches"] = s.batches;
  j["generations"] = s.generations;
  j["generations_per_batch"] = s.batches ? static_cast<double>(s.generations) / static_cast<double>(s.batches) : 0.0;
  j["gpu_decode_s"] = s.decode_s;
  j["latency_ms"] = {{"mean", s.generations ? 1e3 * s.latency_sum_s / static_cast<double>(s.generations) : 0.0},
                     {"max", 1e3 * s.latency_max_s}};
  j["failed_batches"] = s.failed_batches;
  j["host_generations"] = s.host_generations;
  if (!s.first_error.empty()) j["first_error"] = s.first_error;
  return j;
}

double process_cpu_seconds() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec); };
  return s(u.ru_utime) + s(u.ru_stime);
}

struct ServerCost {
  std::optional<std::map<std::string, double>> before, after;
};

double metric(const std::map<std::string, double>& m, const std::string& name) {
  const auto it = m.find(name);
  return it == m.end() ? 0.0 : it->second;
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

nlohmann::json aggregate(const SwarmOptions& o, std::vector<nlohmann::json> peers, double wall_s,
                         const std::vector<ServerCost>& costs, nlohmann::json decoder, double cpu_s) {
  std::sort(peers.begin(), peers.end(), [](const auto& a, const auto& b) { return a["id"] < b["id"]; });
  nlohmann::json j;
  j["event"] = "swarm";
  j["stream"] = o.stream;
  j["loss_model"] = o.loss.describe();
  j["loss_scope"] = o.loss_shared ? "shared" : "peer";
  j["loss_mean"] = o.loss.mean_loss();
  j["loss_slot_ms"] = std::chrono::duration<double, std::milli>(o.loss_slot).count();
  j["delay_ms"] = std::chrono::duration<double, std::milli>(o.delay).count();
  j["jitter_ms"] = std::chrono::duration<double, std::milli>(o.jitter).count();
  j["threads"] = o.threads;
  j["server_mode"] = o.spread ? "spread" : "all";
  j["wall_s"] = wall_s;
  j["decoder"] = std::move(decoder);
  j["swarm_cpu_s"] = cpu_s;  // this process: the peers, their decoding, the batcher
  std::size_t complete = 0, failed = 0, left = 0, realtime = 0;
  std::uint64_t segments = 0, late = 0, stalls = 0, symbols = 0, arrived = 0, lost = 0, needed = 0, non_innovative = 0,
                hash_failures = 0, bad = 0, rejoins = 0, datagrams_lost = 0;
  double stall_s = 0;
  std::uint64_t c_arrived = 0, c_received = 0, c_needed = 0, rt_segments = 0, rt_late = 0;
  std::vector<double> completion, first, arrived_ratio, received_ratio;
  for (const auto& p : peers) {
    const std::string status = p["status"];
    if (p["mode"] == "realtime") ++realtime;
    complete += status == "complete";
    failed += status == "failed";
    left += status == "left";
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
    if (p["mode"] == "realtime" && status != "left") {
      rt_segments += p["segments"].get<std::uint64_t>();
      rt_late += p["late_segments"].get<std::uint64_t>();
    }
    if (!p["time_to_first_segment_s"].is_null()) first.push_back(p["time_to_first_segment_s"]);
    if (status != "complete") continue;
    completion.push_back(p["completion_s"]);
    const double n = p["symbols_needed"].get<double>();
    c_needed += p["symbols_needed"].get<std::uint64_t>();
    c_arrived += p["symbols_arrived"].get<std::uint64_t>();
    c_received += p["symbols_received"].get<std::uint64_t>();
    if (n > 0) {
      arrived_ratio.push_back(p["symbols_arrived"].get<double>() / n);
      received_ratio.push_back(p["symbols_received"].get<double>() / n);
    }
  }
  j["peers"] = peers.size();
  j["realtime"] = realtime;
  j["complete"] = complete;
  j["failed"] = failed;
  j["left"] = left;
  j["ok"] = failed == 0 && complete + left == peers.size() && complete > 0 && hash_failures == 0;
  j["segments"] = segments;
  j["late_segments"] = late;
  j["late_fraction"] = rt_segments ? static_cast<double>(rt_late) / static_cast<double>(rt_segments) : 0.0;
  j["stalls"] = stalls;
  j["stall_s"] = stall_s;
  j["completion_s"] = distribution(completion);
  j["time_to_first_segment_s"] = distribution(first);
  j["symbols_received"] = symbols;
  j["symbols_arrived"] = arrived;
  j["symbols_lost"] = lost;
  j["datagrams_lost"] = datagrams_lost;
  j["symbols_needed"] = needed;
  j["non_innovative"] = non_innovative;
  j["hash_failures"] = hash_failures;
  j["bad_packets"] = bad;
  j["rejoins"] = rejoins;
  j["loss_observed"] = arrived ? static_cast<double>(lost) / static_cast<double>(arrived) : 0.0;
  // Over the peers that completed: what reached them (before the simulated loss) and what the decoder
  // got (after it), per source symbol, against 1 / (1 − mean loss).
  auto mean = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return v.empty() ? 0.0 : s / static_cast<double>(v.size());
  };
  const double implied = 1.0 / (1.0 - o.loss.mean_loss());
  j["arrived_per_needed"] = mean(arrived_ratio);
  j["received_per_needed"] = mean(received_ratio);
  j["implied_per_needed"] = implied;
  j["arrived_vs_implied"] = arrived_ratio.empty() ? 0.0 : mean(arrived_ratio) / implied - 1.0;
  j["overhead"] = c_needed ? static_cast<double>(c_received) / static_cast<double>(c_needed) : 0.0;
  std::uint64_t bytes = 0;
  for (const auto& p : peers) bytes += p["bytes"].get<std::uint64_t>();
  j["bytes"] = bytes;
  j["goodput_mbit_s"] = wall_s > 0 ? 8e-6 * static_cast<double>(bytes) / wall_s : 0.0;

  nlohmann::json servers = nlohmann::json::array();
  double cpu = 0, sent = 0;
  bool all_costs = !costs.empty();
  for (std::size_t i = 0; i < costs.size(); ++i) {
    nlohmann::json s{{"metrics", o.metrics[i].to_string()}};
    if (costs[i].before && costs[i].after) {
      const double c =
          metric(*costs[i].after, "process_cpu_seconds_total") - metric(*costs[i].before, "process_cpu_seconds_total");
      const double b =
          metric(*costs[i].after, "ncast_sent_bytes_total") - metric(*costs[i].before, "ncast_sent_bytes_total");
      s["cpu_s"] = c;
      s["sent_bytes"] = b;
      s["cpu_s_per_gb"] = b > 0 ? c / (b / 1e9) : 0.0;
      s["sessions_created"] = metric(*costs[i].after, "ncast_sessions_created_total") -
                              metric(*costs[i].before, "ncast_sessions_created_total");
      cpu += c;
      sent += b;
    } else {
      s["error"] = "could not read /metrics";
      all_costs = false;
    }
    servers.push_back(s);
  }
  j["servers"] = servers;
  j["server_cpu_s"] = all_costs ? nlohmann::json(cpu) : nlohmann::json(nullptr);
  j["server_sent_bytes"] = all_costs ? nlohmann::json(sent) : nlohmann::json(nullptr);
  j["server_cpu_s_per_gb"] = all_costs && sent > 0 ? nlohmann::json(cpu / (sent / 1e9)) : nlohmann::json(nullptr);
  j["server_cpu_per_peer"] = all_costs && wall_s > 0 && peers.size() > left
                                 ? nlohmann::json(cpu / wall_s / static_cast<double>(peers.size() - left))
                                 : nlohmann::json(nullptr);
  if (o.per_peer) j["per_peer"] = std::move(peers);
  return j;
}

}  // namespace

nlohmann::json run_swarm(const SwarmOptions& o) {
  if (o.servers.empty()) throw std::invalid_argument("a swarm needs at least one server");
  if (o.stream.empty()) throw std::invalid_argument("a swarm needs a stream name");
  if (o.peers == 0) throw std::invalid_argument("a swarm needs at least one peer");
  if (o.threads == 0) throw std::invalid_argument("a swarm needs at least one thread");
  if (!(o.realtime_fraction >= 0 && o.realtime_fraction <= 1))
    throw std::invalid_argument("the realtime fraction must be in [0, 1]");
  if (!(o.ramp_s >= 0) || !(o.churn_rate >= 0) || !(o.churn_duration_s >= 0) || !(o.timeout_s > 0) ||
      !(o.startup_s >= 0))
    throw std::invalid_argument("times and rates must not be negative (and the timeout positive)");
  // Before any peer starts: --decoder gpu without a device fails here.
  const Decoding decoding = choose_decoding(o);
  const std::size_t expected_churn = static_cast<std::size_t>(std::ceil(o.churn_rate * o.churn_duration_s * 2 + 16));
  raise_descriptor_limit(o.peers + (o.churn_rate > 0 ? expected_churn : 0));

  std::optional<SharedLoss> shared;
  if (o.loss_shared) shared.emplace(o.loss, o.seed * 0x9E3779B97F4A7C15ull + 1, o.loss_slot);
  std::mt19937_64 rng(o.seed);
  std::uint32_t next_id = 0;
  // The peer with this id: realtime or download by an even spread of the fraction, its own loss process.
  auto maker = [&](std::uint32_t id) {
    SimPeerOptions po;
    po.servers = o.spread ? std::vector<net::Address>{o.servers[id % o.servers.size()]} : o.servers;
    po.stream = o.stream;
    po.window = o.window;
    po.realtime = std::floor((id + 1) * o.realtime_fraction) > std::floor(id * o.realtime_fraction);
    po.max_datagram = o.max_datagram;
    po.startup = std::chrono::duration<double>(o.startup_s);
    po.delay = o.delay;
    po.jitter = o.jitter;
    po.seed = o.seed * 1000003u + id;
    po.batcher = decoding.batcher;
    SimPeer::Drop drop;
    if (o.loss.kind != LossSpec::Kind::none) {
      if (shared) {
        drop = [s = &*shared](TimePoint now) { return s->drop(now); };
      } else {
        auto process = std::make_shared<LossProcess>(o.loss, po.seed * 0x9E3779B97F4A7C15ull + 7, o.loss_slot);
        drop = [process](TimePoint now) { return process->drop(now); };
      }
    }
    return [id, po = std::move(po), drop = std::move(drop)](asio::io_context& io, RxScratch& scratch, ReadySet& ready) {
      return std::make_unique<SimPeer>(io, id, po, drop, scratch, ready);
    };
  };

  std::vector<ServerCost> costs(o.metrics.size());
  for (std::size_t i = 0; i < o.metrics.size(); ++i) costs[i].before = scrape_metrics(o.metrics[i]);

  const unsigned threads = static_cast<unsigned>(std::min<std::size_t>(o.threads, o.peers));
  std::vector<std::unique_ptr<Worker>> workers;
  for (unsigned t = 0; t < threads; ++t) workers.push_back(std::make_unique<Worker>(o.max_datagram));
  for (auto& w : workers) w->run();
  std::vector<std::size_t> posted(threads, 0);

  const auto start = Clock::now();
  const double cpu_start = process_cpu_seconds();
  const auto deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.timeout_s));
  const auto churn_end =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.churn_duration_s));
  std::exponential_distribution<double> churn_gap(o.churn_rate > 0 ? o.churn_rate : 1.0);
  auto next_churn =
      o.churn_rate > 0
          ? start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(churn_gap(rng)))
          : TimePoint::max();
  auto next_progress = start;
  std::size_t joined = 0;
  std::string why = "timed out";
  for (;;) {
    const auto now = Clock::now();
    // The ramp: peer i joins at ramp·i/peers.
    while (joined < o.peers &&
           seconds(now - start) >= o.ramp_s * static_cast<double>(joined) / static_cast<double>(o.peers)) {
      const std::size_t w = joined % threads;
      workers[w]->add(maker(next_id++));
      ++posted[w];
      ++joined;
    }
    while (now >= next_churn && now < churn_end) {
      const std::size_t w = rng() % threads;
      workers[w]->churn(rng(), o.churn_polite, maker(next_id++));
      ++posted[w];
      next_churn += std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(churn_gap(rng)));
    }
    SwarmProgress progress;
    bool settled = joined == o.peers;
    for (unsigned t = 0; t < threads; ++t) {
      const Snapshot s = workers[t]->snapshot();
      settled = settled && s.handled == posted[t] && s.running == 0;
      progress.running += s.running;
      progress.complete += s.complete;
      progress.failed += s.failed;
      progress.left += s.left;
      progress.symbols += s.symbols;
      progress.arrived += s.arrived;
      progress.lost += s.lost;
      progress.bytes += s.bytes;
      progress.needed += s.needed;
    }
    progress.started = next_id;
    progress.elapsed_s = seconds(now - start);
    if (o.on_progress && now >= next_progress) {
      o.on_progress(progress);
      next_progress =
          now + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.progress_interval_s));
    }
    // Done when every request was carried out and no peer runs (churn has no one left to replace).
    if (settled) {
      why.clear();
      break;
    }
    if (now >= deadline) break;
    std::this_thread::sleep_for(5ms);
  }
  const double wall = seconds(Clock::now() - start);
  std::vector<nlohmann::json> reports;
  std::vector<std::future<std::vector<nlohmann::json>>> futures;
  for (auto& w : workers) futures.push_back(w->finish(why.empty() ? "the swarm ended" : why));
  for (auto& f : futures)
    for (auto& r : f.get()) reports.push_back(std::move(r));
  for (auto& w : workers) w->join();
  const double cpu = process_cpu_seconds() - cpu_start;
  for (std::size_t i = 0; i < o.metrics.size(); ++i) costs[i].after = scrape_metrics(o.metrics[i]);
  return aggregate(o, std::move(reports), wall, costs, describe(o, decoding), cpu);
}

}  // namespace ncast::swarm
