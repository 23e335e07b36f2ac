#include "server/status_report.hpp"

#include <sys/resource.h>

#include <nlohmann/json.hpp>

namespace ncast::server {
namespace {

double cpu_seconds() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

}  // namespace

StatusReport::StatusReport(const ServerOptions& options, ServerPool& pool, const StreamCatalog& streams,
                           const ChunkCoder& coder, const SegmentCache& segments)
    : options_(options), pool_(pool), streams_(streams), coder_(coder), segments_(segments) {}

ServerGauges StatusReport::gauges() {
  totals_ = pool_.totals();
  ServerGauges g;
  g.sessions = totals_.sessions;
  g.streams = streams_.streams().size();
  for (const auto& s : streams_.streams()) {
    g.stream_bytes += s->bytes();
    g.segments += s->segment_count();
    const auto sent = totals_.streams.find(s->info().name);
    // A live stream holds its window; a file is held on disk, its segments cached as peers need them.
    const bool window = !s->file();
    g.per_stream.push_back({s->info().name, window ? s->segment_count() - s->first_segment() : s->segment_count(),
                            window ? s->held_bytes() : s->bytes(),
                            sent == totals_.streams.end() ? StreamTotals{} : sent->second});
  }
  const auto& c = totals_.cache;
  g.engine_symbols = c.symbols_coded;
  g.engine_calls = c.engine_calls;
  g.engine_seconds = c.engine_seconds;
  g.cache_hits = c.hits;
  g.cache_misses = c.misses;
  g.cache_evictions = c.evictions;
  g.cache_bytes = c.bytes;
  const SegmentCacheStats h = segments_.stats();
  g.host_cache_hits = h.hits;
  g.host_cache_misses = h.misses;
  g.host_cache_evictions = h.evictions;
  g.host_cache_bytes = h.bytes;
  const auto& sc = totals_.socket;
  g.sendmmsg_calls = sc.sendmmsg_calls;
  g.gso_sends = sc.gso_sends;
  g.messages_out = sc.messages_out;
  g.would_block = sc.would_block;
  g.send_errors = sc.send_errors;
  g.packets_out = sc.packets_out;
  g.bytes_out = sc.bytes_out;
  g.engine = coder_.description();
  g.uptime_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  g.cpu_seconds = cpu_seconds();
  return g;
}

MetricsHttp::Health StatusReport::health() {
  const ServerGauges g = gauges();
  // A server all of whose streams are still empty (live sources before their first segment) has
  // nothing to give a peer yet.
  const bool serving = g.segments > 0;
  nlohmann::json j{{"status", serving ? "ok" : "no segment yet"},
                   {"streams", g.streams},
                   {"sessions", g.sessions},
                   {"segments", g.segments}};
  return {serving, j.dump()};
}

std::string StatusReport::stats_line(const char* event) {
  const ServerGauges g = gauges();
  auto j =
      nlohmann::json::parse(render_stats_line(totals_.metrics, g, last_gauges_, g.uptime_s - last_gauges_.uptime_s));
  j["event"] = event;
  last_gauges_ = g;
  return j.dump();
}

std::string StatusReport::listening_line(std::uint32_t server_id, const proto::Ed25519Identity& identity,
                                         const std::optional<net::Address>& metrics) const {
  nlohmann::json j;
  j["event"] = "listening";
  j["address"] = pool_.local().to_string();
  j["port"] = pool_.local().port;
  j["metrics"] = metrics ? nlohmann::json(metrics->to_string()) : nlohmann::json(nullptr);
  j["server_id"] = server_id;
  j["identity"] = proto::to_hex(identity.public_key());
  j["engine"] = coder_.description();
  j["gso"] = pool_.gso();
  j["threads"] = pool_.threads();
  j["n"] = options_.n;
  j["symbol_size"] = options_.symbol_size;
  auto streams = nlohmann::json::array();
  for (const auto& s : streams_.streams())
    streams.push_back({{"name", s->info().name},
                       {"stream_id", s->info().stream_id},
                       {"segments", s->segment_count()},
                       {"bytes", s->bytes()},
                       {"live", s->info().live},
                       {"final", s->final()}});
  j["streams"] = streams;
  return j.dump();
}

}  // namespace ncast::server
