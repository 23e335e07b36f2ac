// ncast-server: serves media files and live sources to ncast peers (docs/protocol.md).
#include <sys/resource.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>
#include <memory>

#include "coding/engine.hpp"
#include "server/chunk_coder.hpp"
#include "server/coded_cache.hpp"
#include "server/ingest.hpp"
#include "server/locked_chunk_coder.hpp"
#include "server/media_stream.hpp"
#include "server/metrics_http.hpp"
#include "server/options.hpp"
#include "server/server_pool.hpp"

namespace {

using namespace ncast;
using namespace ncast::server;
namespace asio = boost::asio;

void print_line(const std::string& line) {
  std::fputs(line.c_str(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

std::uint32_t random_server_id() {
  std::uint8_t b[4];
  proto::random_bytes(b);
  return std::uint32_t{b[0]} << 24 | std::uint32_t{b[1]} << 16 | std::uint32_t{b[2]} << 8 | b[3];
}

class App {
 public:
  explicit App(const ServerOptions& o)
      : options_(o),
        engine_(make_engine(o.backend)),
        coder_(make_chunk_coder(*engine_, o.device_memory_mb << 20, o.device_resident)),
        shared_coder_(*coder_),
        ingest_cache_(shared_coder_, o.coded_cache_mb << 20),
        identity_(o.identity.empty() ? proto::Ed25519Identity::generate()
                                     : proto::Ed25519Identity::load_or_create(o.identity)),
        server_id_(o.server_id.value_or(random_server_id())),
        stats_timer_(io_),
        signals_(io_, SIGINT, SIGTERM) {
    const auto density = rlnc::Density::from_fraction(o.density);
    auto make_stream = [&](const std::string& name, bool live) {
      StreamInfo info;
      info.name = name;
      info.stream_id = stream_id_of(name);
      info.server_id = server_id_;
      info.n = o.n;
      info.symbol_size = o.symbol_size;
      info.bitrate = o.bitrate;
      info.live = live;
      if (name.empty() || name.size() > 255)
        throw std::invalid_argument("stream name '" + name + "' must be 1..255 octets");
      for (const auto& s : streams_)
        if (s->info().name == name) throw std::invalid_argument("two streams are named '" + name + "'");
      streams_.push_back(std::make_unique<MediaStream>(info, ingest_cache_, density));
      return streams_.back().get();
    };
    for (const auto& f : o.files) ingest_file(f, *make_stream(std::filesystem::path(f).filename().string(), false));
    for (const auto& d : o.dirs)
      for (const auto& f : media_files(d)) ingest_file(f, *make_stream(f.filename().string(), false));
    std::vector<MediaStream*> live;
    for (const auto& l : o.live) live.push_back(make_stream(l.name, true));
    std::vector<MediaStream*> all;
    for (const auto& s : streams_) all.push_back(s.get());
    pool_ = std::make_unique<ServerPool>(o.config, identity_, o.threads, shared_coder_, o.coded_cache_mb << 20, all,
                                         [this](const std::string& error) {
                                           asio::post(io_, [this, error] {
                                             std::cerr << "ncast-server: " << error << "\n";
                                             failed_ = true;
                                             stop();
                                           });
                                         });
    for (std::size_t i = 0; i < o.live.size(); ++i) {
      MediaStream* s = live[i];
      LiveIngest::Options lo;
      lo.flush_after = std::chrono::milliseconds(o.live_flush_ms);
      lo.end_after = std::chrono::seconds(o.live_end_after_s);
      live_.push_back(
          std::make_unique<LiveIngest>(io_, o.live[i].path, *s, lo, [this, s] { pool_->stream_changed(*s); }));
    }
    if (o.metrics)
      http_ = std::make_unique<MetricsHttp>(io_, net::Address::parse(*o.metrics), [this] {
        const ServerGauges g = gauges();
        return render_prometheus(last_totals_.metrics, g);
      });
  }

  int run() {
    pool_->start();
    for (auto& l : live_) l->start();
    signals_.async_wait([this](const boost::system::error_code& ec, int) {
      if (!ec) stop();
    });
    announce();
    if (options_.stats_interval_s > 0) stats();
    io_.run();
    pool_->stop();
    print_line(stats_line("stopped"));
    return failed_ ? 1 : 0;
  }

 private:
  // Also refreshes last_totals_: the threads' counters as of now.
  ServerGauges gauges() {
    last_totals_ = pool_->totals();
    const ServerPool::Totals& t = last_totals_;
    ServerGauges g;
    g.sessions = t.sessions;
    g.streams = streams_.size();
    for (const auto& s : streams_) {
      g.stream_bytes += s->bytes();
      g.segments += s->segment_count();
    }
    const auto& c = t.cache;
    g.engine_symbols = c.symbols_coded;
    g.engine_calls = c.engine_calls;
    g.engine_seconds = c.engine_seconds;
    g.cache_hits = c.hits;
    g.cache_misses = c.misses;
    g.cache_evictions = c.evictions;
    g.cache_bytes = c.bytes;
    const auto& sc = t.socket;
    g.sendmmsg_calls = sc.sendmmsg_calls;
    g.gso_sends = sc.gso_sends;
    g.would_block = sc.would_block;
    g.send_errors = sc.send_errors;
    g.packets_out = sc.packets_out;
    g.bytes_out = sc.bytes_out;
    g.engine = coder_->description();
    g.uptime_s = std::chrono::duration<double>(Clock::now() - started_).count();
    rusage usage{};
    ::getrusage(RUSAGE_SELF, &usage);
    g.cpu_seconds = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                    1e-6 * static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
    return g;
  }

  std::string stats_line(const char* event) {
    const ServerGauges g = gauges();
    auto j = nlohmann::json::parse(
        render_stats_line(last_totals_.metrics, g, last_gauges_, g.uptime_s - last_gauges_.uptime_s));
    j["event"] = event;
    last_gauges_ = g;
    return j.dump();
  }

  void announce() {
    nlohmann::json j;
    j["event"] = "listening";
    j["address"] = pool_->local().to_string();
    j["port"] = pool_->local().port;
    j["metrics"] = http_ ? nlohmann::json(http_->local().to_string()) : nlohmann::json(nullptr);
    j["server_id"] = server_id_;
    j["identity"] = proto::to_hex(identity_.public_key());
    j["engine"] = coder_->description();
    j["gso"] = pool_->gso();
    j["threads"] = pool_->threads();
    j["n"] = options_.n;
    j["symbol_size"] = options_.symbol_size;
    auto streams = nlohmann::json::array();
    for (const auto& s : streams_)
      streams.push_back({{"name", s->info().name},
                         {"stream_id", s->info().stream_id},
                         {"segments", s->segment_count()},
                         {"bytes", s->bytes()},
                         {"live", s->info().live},
                         {"final", s->final()}});
    j["streams"] = streams;
    print_line(j.dump());
  }

  void stats() {
    stats_timer_.expires_after(std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(options_.stats_interval_s)));
    stats_timer_.async_wait([this](const boost::system::error_code& ec) {
      if (ec) return;
      print_line(stats_line("stats"));
      stats();
    });
  }

  void stop() {
    stats_timer_.cancel();
    for (auto& l : live_) l->stop();
    if (http_) http_->close();
    signals_.cancel();
    // The threads say BYE to their sessions and end; then this one ends.
    pool_->stop();
    io_.stop();
  }

  ServerOptions options_;
  asio::io_context io_;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<ChunkCoder> coder_;
  // Calls from the ingest thread (new segments) and the server threads (cache misses) take turns.
  LockedChunkCoder shared_coder_;
  // Only the coder and its host memory serve the streams here: each server thread has its own cache.
  CodedCache ingest_cache_;
  proto::Ed25519Identity identity_;
  std::uint32_t server_id_;
  std::vector<std::unique_ptr<MediaStream>> streams_;
  std::vector<std::unique_ptr<LiveIngest>> live_;
  std::unique_ptr<ServerPool> pool_;
  std::unique_ptr<MetricsHttp> http_;
  asio::steady_timer stats_timer_;
  asio::signal_set signals_;
  ServerGauges last_gauges_;
  ServerPool::Totals last_totals_;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  bool failed_ = false;
};

}  // namespace

int main(int argc, char** argv) {
  ncast::server::ParsedOptions parsed;
  try {
    parsed = ncast::server::parse_server_options(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "ncast-server: " << e.what() << "\n";
    return 2;
  }
  if (parsed.action != ncast::cli::Action::run) {
    std::cout << parsed.text;
    return 0;
  }
  try {
    App app(parsed.options);
    return app.run();
  } catch (const std::exception& e) {
    std::cerr << "ncast-server: " << e.what() << "\n";
    return 1;
  }
}
