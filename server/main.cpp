// ncast-server: serves media files and live sources to ncast peers (docs/protocol.md).
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "coding/engine.hpp"
#include "server/chunk_coder.hpp"
#include "server/coded_cache.hpp"
#include "server/ingest.hpp"
#include "server/locked_chunk_coder.hpp"
#include "server/media_stream.hpp"
#include "server/metrics_http.hpp"
#include "server/options.hpp"
#include "server/segment_cache.hpp"
#include "server/server_pool.hpp"
#include "server/status_report.hpp"
#include "server/stream_bitrate.hpp"
#include "server/stream_catalog.hpp"

namespace {

using namespace ncast;
using namespace ncast::server;
namespace asio = boost::asio;

void print_line(const std::string& line) {
  std::fputs(line.c_str(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

// Wires the parts together and runs them until a signal or a failing thread stops them.
class App {
 public:
  explicit App(const ServerOptions& o)
      : options_(o),
        engine_(make_engine(o.backend)),
        coder_(make_chunk_coder(*engine_, o.device_memory_mb << 20, o.device_resident)),
        shared_coder_(*coder_),
        ingest_cache_(shared_coder_, o.coded_cache_mb << 20),
        segment_cache_(coder_->backend(), o.host_memory_mb << 20),
        identity_(o.identity.empty() ? proto::Ed25519Identity::generate()
                                     : proto::Ed25519Identity::load_or_create(o.identity)),
        server_id_(o.server_id.value_or(proto::random_u32())),
        catalog_(o, server_id_, ingest_cache_, segment_cache_),
        pool_(o.config, identity_, o.threads, shared_coder_, o.coded_cache_mb << 20, catalog_.all(),
              [this](const std::string& error) { asio::post(io_, [this, error] { fail(error); }); }),
        report_(o, pool_, catalog_, *coder_, segment_cache_),
        stats_timer_(io_),
        signals_(io_, SIGINT, SIGTERM) {
    for (std::size_t i = 0; i < o.live.size(); ++i) {
      MediaStream* s = catalog_.live()[i];
      LiveIngest::Options lo;
      lo.flush_after = std::chrono::milliseconds(o.live_flush_ms);
      lo.end_after = std::chrono::seconds(o.live_end_after_s);
      live_.push_back(std::make_unique<LiveIngest>(io_, o.live[i].path, *s, lo, [this, i] { live_changed(i); }));
    }
    live_warned_.resize(o.live.size());
    for (const auto& w : catalog_.warnings()) std::cerr << "ncast-server: warning: " << w << "\n";
    if (o.metrics)
      http_ = std::make_unique<MetricsHttp>(
          io_, *o.metrics,
          [this] {
            const ServerGauges g = report_.gauges();
            return render_prometheus(report_.totals().metrics, g);
          },
          [this] { return report_.health(); });
  }

  int run() {
    pool_.start();
    for (auto& l : live_) l->start();
    signals_.async_wait([this](const boost::system::error_code& ec, int) {
      if (!ec) stop();
    });
    print_line(report_.listening_line(server_id_, identity_,
                                      http_ ? std::optional<net::Address>(http_->local()) : std::nullopt));
    if (options_.stats_interval_s > 0) stats();
    io_.run();
    pool_.stop();
    print_line(report_.stats_line("stopped"));
    return failed_ ? 1 : 0;
  }

 private:
  void stats() {
    stats_timer_.expires_after(std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(options_.stats_interval_s)));
    stats_timer_.async_wait([this](const boost::system::error_code& ec) {
      if (ec) return;
      print_line(report_.stats_line("stats"));
      stats();
    });
  }

  // A live stream grew or ended: its measured bitrate paces its sessions from now on.
  void live_changed(std::size_t i) {
    MediaStream& s = *catalog_.live()[i];
    const LiveIngest& ingest = *live_[i];
    const std::uint64_t measured = ingest.measured_bitrate();
    if (measured > 0) s.set_bitrate(pacing_bitrate(options_.bitrate, measured));
    if (!live_warned_[i])
      if (auto w = bitrate_warning(s.info().name, options_.bitrate, measured)) {
        std::cerr << "ncast-server: warning: " << *w << "\n";
        live_warned_[i] = true;
      }
    if (ingest.ended())
      print_line(nlohmann::json{
          {"event", "live_end"},
          {"stream", s.info().name},
          {"segments", s.segment_count()},
          {"bytes", s.bytes()},
          {"bitrate",
           measured}}.dump());
    pool_.stream_changed(s);
  }

  void fail(const std::string& error) {
    std::cerr << "ncast-server: " << error << "\n";
    failed_ = true;
    stop();
  }

  void stop() {
    stats_timer_.cancel();
    for (auto& l : live_) l->stop();
    if (http_) http_->close();
    signals_.cancel();
    // The threads say BYE to their sessions and end; then this one ends.
    pool_.stop();
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
  // Segments of files, read on demand; every server thread reads through it.
  SegmentCache segment_cache_;
  proto::Ed25519Identity identity_;
  std::uint32_t server_id_;
  StreamCatalog catalog_;
  ServerPool pool_;
  StatusReport report_;
  std::vector<std::unique_ptr<LiveIngest>> live_;
  std::vector<bool> live_warned_;  // per live stream: told the operator its --bitrate is too low
  std::unique_ptr<MetricsHttp> http_;
  asio::steady_timer stats_timer_;
  asio::signal_set signals_;
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
