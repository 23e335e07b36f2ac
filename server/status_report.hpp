#pragma once
// What ncast-server says about itself: the gauges behind /metrics and the stats lines, the JSON stats
// lines (each with the rates since the previous one), and the "listening" line it starts with.
#include <chrono>
#include <cstdint>
#include <string>

#include "protocol/crypto.hpp"
#include "server/chunk_coder.hpp"
#include "server/metrics.hpp"
#include "server/metrics_http.hpp"
#include "server/options.hpp"
#include "server/segment_cache.hpp"
#include "server/server_pool.hpp"
#include "server/stream_catalog.hpp"

namespace ncast::server {

class StatusReport {
 public:
  // Everything named here outlives the report.
  StatusReport(const ServerOptions& options, ServerPool& pool, const StreamCatalog& streams, const ChunkCoder& coder,
               const SegmentCache& segments);

  // Also refreshes totals(): the threads' counters as of now.
  ServerGauges gauges();
  const ServerPool::Totals& totals() const { return totals_; }
  // For /healthz: serving once a stream has a segment; a one-line JSON of streams and sessions.
  MetricsHttp::Health health();
  // One JSON line; event names it ("stats", "stopped").
  std::string stats_line(const char* event);
  // metrics: the /metrics address, if served.
  std::string listening_line(std::uint32_t server_id, const proto::Ed25519Identity& identity,
                             const std::optional<net::Address>& metrics) const;

 private:
  const ServerOptions& options_;
  ServerPool& pool_;
  const StreamCatalog& streams_;
  const ChunkCoder& coder_;
  const SegmentCache& segments_;
  ServerGauges last_gauges_;
  ServerPool::Totals totals_;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
};

}  // namespace ncast::server
