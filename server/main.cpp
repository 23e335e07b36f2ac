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
#include "server/media_stream.hpp"
#include "server/metrics_http.hpp"
#include "server/options.hpp"
#include "server/server.hpp"

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
      : options_(o), engine_(make_engine(o.backend)), coder_(make_chunk_coder(*engine_, o.device_memory_mb << 20, o.device_resident)),
        cache_(*coder_, o.coded_cache_mb << 20),
        identity_(o.identity.empty() ? proto::Ed25519Identity::generate()
                                     : proto::Ed25519Identity::load_or_create(o.identity)),
        server_id_(o.server_id.value_or(random_server_id())), stats_timer_(io_), signals_(io_, SIGINT, SIGTERM) {
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
      if (name.empty() || name.size() > 255) throw std::invalid_argument("stream name '" + name + "' must be 1..255 octets");
      for (const auto& s : streams_)
        if (s->info().name == name) throw std::invalid_argument("two streams are named '" + name + "'");
      streams_.push_back(std::make_unique<MediaStream>(info, cache_, density));
      return streams_.back().get();
    };
    for (const auto& f : o.files) ingest_file(f, *make_stream(std::filesystem::path(f).filename().string(), false));
    for (const auto& d : o.dirs)
      for (const auto& f : media_files(d)) ingest_file(f, *make_stream(f.filename().string(), false));
    server_ = std::make_unique<Server>(io_, o.config, identity_);
    for (const auto& l : o.live) {
      MediaStream* s = make_stream(l.name, true);
      LiveIngest::Options lo;
      lo.flush_after = std::chrono::milliseconds(o.live_flush_ms);
      lo.end_after = std::chrono::seconds(o.live_end_after_s);
      live_.push_back(std::make_unique<LiveIngest>(io_, l.path, *s, lo, [this, s] { server_->stream_changed(*s); }));
    }
    for (const auto& s : streams_) server_->add_stream(*s);
    if (o.metrics)
      http_ = std::make_unique<MetricsHttp>(io_, proto::Address::parse(*o.metrics),
                                            [this] { return render_prometheus(server_->metrics(), gauges()); });
  }

  int run() {
    server_->start();
    for (auto& l : live_) l->start();
    signals_.async_wait([this](const boost::system::error_code& ec, int) {
      if (!ec) stop();
    });
    announce();
    if (options_.stats_interval_s > 0) stats();
    io_.run();
    print_line(stats_line("stopped"));
    return 0;
  }

 private:
  ServerGauges gauges() const {
    ServerGauges g;
    g.sessions = server_->session_count();
    g.streams = streams_.size();
    for (const auto& s : streams_) {
      g.stream_bytes += s->bytes();
      g.segments += s->segment_count();
    }
    const auto& c = cache_.stats();
    g.engine_symbols = c.symbols_coded;
    g.engine_calls = c.engine_calls;
    g.engine_seconds = c.engine_seconds;
    g.cache_hits = c.hits;
    g.cache_misses = c.misses;
    g.cache_evictions = c.evictions;
    g.cache_bytes = c.bytes;
    const auto& sc = server_->socket_counters();
    g.sendmmsg_calls = sc.sendmmsg_calls;
    g.gso_sends = sc.gso_sends;
    g.would_block = sc.would_block;
    g.send_errors = sc.send_errors;
    g.packets_out = sc.packets_out;
    g.bytes_out = sc.bytes_out;
    g.engine = coder_->description();
    g.uptime_s = std::chrono::duration<double>(Clock::now() - server_->started()).count();
    rusage usage{};
    ::getrusage(RUSAGE_SELF, &usage);
    g.cpu_seconds = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                    1e-6 * static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
    return g;
  }

  std::string stats_line(const char* event) {
    const ServerGauges g = gauges();
    auto j = nlohmann::json::parse(render_stats_line(server_->metrics(), g, last_gauges_,
                                                     g.uptime_s - last_gauges_.uptime_s));
    j["event"] = event;
    last_gauges_ = g;
    return j.dump();
  }

  void announce() {
    nlohmann::json j;
    j["event"] = "listening";
    j["address"] = server_->local().to_string();
    j["port"] = server_->local().port;
    j["metrics"] = http_ ? nlohmann::json(http_->local().to_string()) : nlohmann::json(nullptr);
    j["server_id"] = server_id_;
    j["identity"] = proto::to_hex(identity_.public_key());
    j["engine"] = coder_->description();
    j["gso"] = server_->gso();
    j["n"] = options_.n;
    j["symbol_size"] = options_.symbol_size;
    auto streams = nlohmann::json::array();
    for (const auto& s : streams_)
      streams.push_back({{"name", s->info().name}, {"stream_id", s->info().stream_id}, {"segments", s->segment_count()},
                         {"bytes", s->bytes()}, {"live", s->info().live}, {"final", s->final()}});
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
    server_->shutdown([this] { io_.stop(); });
  }

  ServerOptions options_;
  asio::io_context io_;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<ChunkCoder> coder_;
  CodedCache cache_;
  proto::Ed25519Identity identity_;
  std::uint32_t server_id_;
  std::vector<std::unique_ptr<MediaStream>> streams_;
  std::vector<std::unique_ptr<LiveIngest>> live_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<MetricsHttp> http_;
  asio::steady_timer stats_timer_;
  asio::signal_set signals_;
  ServerGauges last_gauges_;
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
  if (parsed.action != ncast::server::ParsedOptions::Action::run) {
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
