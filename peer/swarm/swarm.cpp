#include "peer/swarm/swarm.hpp"

#include <sys/resource.h>

#include <algorithm>
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
#include "peer/swarm/socket_group.hpp"
#include "peer/swarm/swarm_report.hpp"
#include "peer/swarm/worker.hpp"

namespace ncast::swarm {
namespace {

using namespace std::chrono_literals;

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }
Clock::duration after(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

void check(const SwarmOptions& o) {
  if (o.servers.empty()) throw std::invalid_argument("a swarm needs at least one server");
  if (o.stream.empty()) throw std::invalid_argument("a swarm needs a stream name");
  if (o.peers == 0) throw std::invalid_argument("a swarm needs at least one peer");
  if (o.threads == 0) throw std::invalid_argument("a swarm needs at least one thread");
  if (o.peers_per_socket == 0) throw std::invalid_argument("at least one peer per socket");
  if (!(o.realtime_fraction >= 0 && o.realtime_fraction <= 1))
    throw std::invalid_argument("the realtime fraction must be in [0, 1]");
  if (!(o.verify_fraction > 0 && o.verify_fraction <= 1))
    throw std::invalid_argument("the verify fraction must be in (0, 1]");
  if (!(o.ramp_s >= 0) || !(o.churn_rate >= 0) || !(o.churn_duration_s >= 0) || !(o.timeout_s > 0) ||
      !(o.startup_s >= 0))
    throw std::invalid_argument("times and rates must not be negative (and the timeout positive)");
}

// Lets the process hold the peers' sockets.
void raise_descriptor_limit(const SwarmOptions& o, std::size_t peers) {
  rlimit r{};
  if (::getrlimit(RLIMIT_NOFILE, &r) != 0) return;
  const rlim_t want = static_cast<rlim_t>(descriptors_needed(o, peers));
  if (r.rlim_cur >= want) return;
  r.rlim_cur = std::min(want, r.rlim_max);
  ::setrlimit(RLIMIT_NOFILE, &r);
  ::getrlimit(RLIMIT_NOFILE, &r);
  if (r.rlim_cur < want)
    throw std::invalid_argument(std::to_string(peers) + " peers need " + std::to_string(want) +
                                " file descriptors; the limit is " + std::to_string(r.rlim_cur) + " (ulimit -n)");
}

// Among the first peers (churn's newcomers aside).
std::size_t verifying_peers(const SwarmOptions& o) {
  std::size_t count = 0;
  for (std::uint32_t id = 0; id < o.peers; ++id) count += verifies(id, o.verify_fraction);
  return count;
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
  if (verifying_peers(o) < kAutoGpuPeers)
    return {nullptr, "fewer than " + std::to_string(kAutoGpuPeers) + " verifying peers"};
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

// Makes the peer with an id (on its worker's thread): realtime or download by an even spread of the
// fraction, with the swarm's loss process or one of its own. Outlives its peers, which may hold the
// shared loss process.
class PeerMaker {
 public:
  PeerMaker(const SwarmOptions& o, std::shared_ptr<peer::DecodeBatcher> batcher) : o_(o), batcher_(std::move(batcher)) {
    if (o.loss_shared) shared_.emplace(o.loss, o.seed * 0x9E3779B97F4A7C15ull + 1, o.loss_slot);
  }

  MakePeer operator()(std::uint32_t id) {
    SimPeerOptions po = options_of(id);
    SimPeer::Drop drop = drop_of(po.seed);
    return [id, po = std::move(po), drop = std::move(drop)](boost::asio::io_context& io, SocketGroups& sockets,
                                                            const std::shared_ptr<peer::SharedParts>& parts) mutable {
      po.parts = parts;
      return std::make_unique<SimPeer>(io, id, po, drop, sockets);
    };
  }

 private:
  SimPeerOptions options_of(std::uint32_t id) const {
    SimPeerOptions po;
    po.servers = o_.spread ? std::vector<net::Address>{o_.servers[id % o_.servers.size()]} : o_.servers;
    po.stream = o_.stream;
    po.window = o_.window;
    po.realtime = std::floor((id + 1) * o_.realtime_fraction) > std::floor(id * o_.realtime_fraction);
    po.max_datagram = o_.max_datagram;
    po.startup = std::chrono::duration<double>(o_.startup_s);
    po.delay = o_.delay;
    po.jitter = o_.jitter;
    po.seed = o_.seed * 1000003u + id;
    po.batcher = batcher_;
    po.verify = verifies(id, o_.verify_fraction);
    return po;
  }

  SimPeer::Drop drop_of(std::uint64_t peer_seed) {
    if (o_.loss.kind == LossSpec::Kind::none) return {};
    if (shared_) return [s = &*shared_](TimePoint now) { return s->drop(now); };
    auto process = std::make_shared<LossProcess>(o_.loss, peer_seed * 0x9E3779B97F4A7C15ull + 7, o_.loss_slot);
    return [process](TimePoint now) { return process->drop(now); };
  }

  const SwarmOptions& o_;
  std::shared_ptr<peer::DecodeBatcher> batcher_;
  std::optional<SharedLoss> shared_;
};

// The worker threads, each with the count of requests posted to it: a worker has carried out all of
// its requests when its snapshot has handled as many.
class WorkerPool {
 public:
  WorkerPool(unsigned threads, std::uint16_t max_datagram, std::size_t per_socket, bool share_parts)
      : posted_(threads, 0) {
    workers_.reserve(threads);
    for (unsigned t = 0; t < threads; ++t)
      workers_.push_back(std::make_unique<Worker>(max_datagram, per_socket, share_parts));
    for (auto& w : workers_) w->run();
  }

  std::size_t size() const { return workers_.size(); }

  void add(std::size_t w, MakePeer make) {
    workers_[w]->add(std::move(make));
    ++posted_[w];
  }

  void churn(std::size_t w, std::uint64_t pick, bool polite, MakePeer make) {
    workers_[w]->churn(pick, polite, std::move(make));
    ++posted_[w];
  }

  // The workers' latest counters summed; idle: every request carried out and no peer running.
  SwarmProgress progress(bool& idle) {
    SwarmProgress p;
    idle = true;
    for (std::size_t t = 0; t < workers_.size(); ++t) {
      const WorkerSnapshot s = workers_[t]->snapshot();
      idle = idle && s.handled == posted_[t] && s.running == 0;
      p.running += s.running;
      p.complete += s.complete;
      p.failed += s.failed;
      p.left += s.left;
      p.symbols += s.symbols;
      p.arrived += s.arrived;
      p.lost += s.lost;
      p.bytes += s.bytes;
      p.needed += s.needed;
    }
    return p;
  }

  // Ends the run (peers still running fail with why) and returns every peer's report.
  std::vector<nlohmann::json> finish(const std::string& why) {
    std::vector<std::future<std::vector<nlohmann::json>>> futures;
    futures.reserve(workers_.size());
    for (auto& w : workers_) futures.push_back(w->finish(why));
    std::vector<nlohmann::json> reports;
    for (auto& f : futures)
      for (auto& r : f.get()) reports.push_back(std::move(r));
    for (auto& w : workers_) w->join();
    return reports;
  }

 private:
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<std::size_t> posted_;
};

// The calling thread's part of a run: the ramp, churn, progress reports and the end.
class Conductor {
 public:
  Conductor(const SwarmOptions& o, PeerMaker& make_peer, WorkerPool& pool)
      : o_(o),
        make_peer_(make_peer),
        pool_(pool),
        rng_(o.seed),
        churn_gap_(o.churn_rate > 0 ? o.churn_rate : 1.0),
        start_(Clock::now()),
        deadline_(start_ + after(o.timeout_s)),
        churn_end_(start_ + after(o.churn_duration_s)),
        next_churn_(o.churn_rate > 0 ? start_ + after(churn_gap_(rng_)) : TimePoint::max()),
        next_progress_(start_) {}

  // Runs until every request was carried out and no peer runs (churn has no one left to replace), the
  // timeout, or a stop reason; returns why the peers still running then have failed.
  std::string run() {
    for (;;) {
      if (o_.stop_reason) {
        stopped_early_ = o_.stop_reason();
        if (!stopped_early_.empty()) return stopped_early_;
      }
      const auto now = Clock::now();
      ramp(now);
      churn(now);
      if (observe(now)) return "the swarm ended";
      if (now >= deadline_) return "timed out";
      std::this_thread::sleep_for(5ms);
    }
  }

  double elapsed_s() const { return seconds(Clock::now() - start_); }
  // The stop reason that ended the run early; empty when it ran its course.
  const std::string& stopped_early() const { return stopped_early_; }

 private:
  // Peer i joins at ramp·i/peers.
  void ramp(TimePoint now) {
    while (joined_ < o_.peers &&
           seconds(now - start_) >= o_.ramp_s * static_cast<double>(joined_) / static_cast<double>(o_.peers)) {
      pool_.add(joined_ % pool_.size(), make_peer_(next_id_++));
      ++joined_;
    }
  }

  void churn(TimePoint now) {
    while (now >= next_churn_ && now < churn_end_) {
      const std::size_t w = rng_() % pool_.size();
      const std::uint64_t pick = rng_();
      pool_.churn(w, pick, o_.churn_polite, make_peer_(next_id_++));
      next_churn_ += after(churn_gap_(rng_));
    }
  }

  // Reports progress when due; true when the run is settled.
  bool observe(TimePoint now) {
    bool idle = false;
    SwarmProgress progress = pool_.progress(idle);
    progress.started = next_id_;
    progress.elapsed_s = seconds(now - start_);
    if (o_.on_progress && now >= next_progress_) {
      o_.on_progress(progress);
      next_progress_ = now + after(o_.progress_interval_s);
    }
    return joined_ == o_.peers && idle;
  }

  const SwarmOptions& o_;
  PeerMaker& make_peer_;
  WorkerPool& pool_;
  std::mt19937_64 rng_;
  std::exponential_distribution<double> churn_gap_;
  TimePoint start_, deadline_, churn_end_, next_churn_, next_progress_;
  std::uint32_t next_id_ = 0;
  std::size_t joined_ = 0;
  std::string stopped_early_;
};

std::vector<ServerCost> scrape_before(const SwarmOptions& o) {
  std::vector<ServerCost> costs(o.metrics.size());
  for (std::size_t i = 0; i < o.metrics.size(); ++i) costs[i].before = scrape_metrics(o.metrics[i]);
  return costs;
}

void scrape_after(const SwarmOptions& o, std::vector<ServerCost>& costs) {
  for (std::size_t i = 0; i < o.metrics.size(); ++i) costs[i].after = scrape_metrics(o.metrics[i]);
}

}  // namespace

bool verifies(std::uint32_t id, double fraction) {
  constexpr double kGolden = 0.6180339887498949;  // (√5 − 1) / 2
  const double x = static_cast<double>(id) * kGolden;
  return x - std::floor(x) < fraction;
}

std::size_t descriptors_needed(const SwarmOptions& o, std::size_t peers) {
  constexpr std::size_t kMargin = 256;
  // A worker's last group may be part full.
  if (!shares_sockets(o.servers, o.peers_per_socket)) return peers + kMargin;
  return (peers + o.peers_per_socket - 1) / o.peers_per_socket + o.threads + kMargin;
}

nlohmann::json run_swarm(const SwarmOptions& o) {
  check(o);
  // Before any peer starts: --decoder gpu without a device fails here.
  const Decoding decoding = choose_decoding(o);
  const std::size_t expected_churn = static_cast<std::size_t>(std::ceil(o.churn_rate * o.churn_duration_s * 2 + 16));
  raise_descriptor_limit(o, o.peers + (o.churn_rate > 0 ? expected_churn : 0));

  PeerMaker make_peer(o, decoding.batcher);
  RunRecord run;
  run.costs = scrape_before(o);
  WorkerPool pool(static_cast<unsigned>(std::min<std::size_t>(o.threads, o.peers)), o.max_datagram, o.peers_per_socket,
                  o.share_parts);
  Conductor conductor(o, make_peer, pool);
  const double cpu_start = process_cpu_seconds();
  const std::string why = conductor.run();
  run.wall_s = conductor.elapsed_s();
  run.partial = conductor.stopped_early();
  run.peers = pool.finish(why);
  run.cpu_s = process_cpu_seconds() - cpu_start;
  scrape_after(o, run.costs);
  return swarm_report(o, std::move(run), describe(o, decoding));
}

}  // namespace ncast::swarm
