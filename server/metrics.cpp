#include "server/metrics.hpp"

#include <nlohmann/json.hpp>

#include <sstream>

namespace ncast::server {

void ServerMetrics::segment_completed(std::size_t sent, std::size_t n_s) {
  ++segments_completed;
  completed_symbols_sent += sent;
  completed_source_symbols += n_s;
  const double ratio = n_s ? static_cast<double>(sent) / static_cast<double>(n_s) : 0;
  overhead_sum += ratio;
  for (std::size_t i = 0; i < kOverheadBuckets.size(); ++i)
    if (ratio <= kOverheadBuckets[i] + 1e-9) ++overhead_buckets[i];
}

ServerMetrics& ServerMetrics::operator+=(const ServerMetrics& o) {
  rx_packets += o.rx_packets;
  rx_bytes += o.rx_bytes;
  drops += o.drops;
  hellos += o.hellos;
  hello_bytes += o.hello_bytes;
  retries += o.retries;
  retry_bytes += o.retry_bytes;
  rejects += o.rejects;
  reject_bytes += o.reject_bytes;
  joins += o.joins;
  manifests += o.manifests;
  sessions_created += o.sessions_created;
  for (std::size_t i = 0; i < kCloseReasons; ++i) sessions_closed[i] += o.sessions_closed[i];
  coded_packets += o.coded_packets;
  systematic_packets += o.systematic_packets;
  segments_packets += o.segments_packets;
  bye_packets += o.bye_packets;
  path_probes += o.path_probes;
  migrations += o.migrations;
  tx_bytes += o.tx_bytes;
  segments_completed += o.segments_completed;
  completed_symbols_sent += o.completed_symbols_sent;
  completed_source_symbols += o.completed_source_symbols;
  for (std::size_t i = 0; i < kOverheadBuckets.size(); ++i) overhead_buckets[i] += o.overhead_buckets[i];
  overhead_sum += o.overhead_sum;
  congestion_events += o.congestion_events;
  silences += o.silences;
  breaker_trips += o.breaker_trips;
  window_entries += o.window_entries;
  session_rate += o.session_rate;
  session_rtt += o.session_rtt;
  return *this;
}

StreamTotals& StreamTotals::operator+=(const StreamTotals& o) {
  sessions += o.sessions;
  sent_packets += o.sent_packets;
  sent_bytes += o.sent_bytes;
  return *this;
}

namespace {

void counter(std::ostringstream& o, const char* name, const char* help, double value, const char* labels = "") {
  o << "# HELP " << name << ' ' << help << "\n# TYPE " << name << " counter\n"
    << name << labels << ' ' << value << '\n';
}

std::string label(double bound) {
  std::ostringstream o;
  o << bound;  // default precision: 1.1, not 1.1000000000000001
  return o.str();
}

void gauge(std::ostringstream& o, const char* name, const char* help, double value) {
  o << "# HELP " << name << ' ' << help << "\n# TYPE " << name << " gauge\n" << name << ' ' << value << '\n';
}

// A label value as the text format wants it: backslash, double quote and line feed escaped.
std::string escape_label(const std::string& value) {
  std::string out;
  for (const char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    out += c == '\n' ? std::string("\\n") : std::string(1, c);
  }
  return out;
}

template <std::size_t N>
void histogram(std::ostringstream& o, const char* name, const char* help, const std::array<double, N>& bounds,
               const Histogram<N>& h) {
  o << "# HELP " << name << ' ' << help << "\n# TYPE " << name << " histogram\n";
  for (std::size_t i = 0; i < N; ++i)
    o << name << "_bucket{le=\"" << label(bounds[i]) << "\"} " << h.buckets[i] << '\n';
  o << name << "_bucket{le=\"+Inf\"} " << h.count << '\n'
    << name << "_sum " << h.sum << '\n'
    << name << "_count " << h.count << '\n';
}

void congestion_control(std::ostringstream& o, const ServerMetrics& m) {
  counter(o, "ncast_congestion_events_total", "Congestion events of the sessions' rate controllers.",
          static_cast<double>(m.congestion_events));
  counter(o, "ncast_silences_total", "Times a session heard no ACK within a timeout and fell back to probing.",
          static_cast<double>(m.silences));
  counter(o, "ncast_circuit_breaker_trips_total", "Paced sessions ended because their path did not carry the stream.",
          static_cast<double>(m.breaker_trips));
  counter(o, "ncast_window_flow_entries_total",
          "Times a download found a queue that others keep standing and became a window flow (ACK-clocked).",
          static_cast<double>(m.window_entries));
  histogram(o, "ncast_session_rate_bits", "Sessions' delivery-rate estimates (bit/s), sampled once a second.",
            kRateBuckets, m.session_rate);
  histogram(o, "ncast_session_rtt_seconds", "Sessions' smoothed RTT estimates, sampled once a second.", kRttBuckets,
            m.session_rtt);
}

void per_stream(std::ostringstream& o, const ServerGauges& g) {
  struct Series {
    const char *name, *type, *help;
    double (*value)(const StreamGauges&);
  };
  static constexpr Series series[] = {
      {"ncast_stream_sessions", "gauge", "Sessions open now, per stream.",
       [](const StreamGauges& s) { return static_cast<double>(s.totals.sessions); }},
      {"ncast_stream_sent_bytes_total", "counter", "Octets of session packets sent, per stream.",
       [](const StreamGauges& s) { return static_cast<double>(s.totals.sent_bytes); }},
      {"ncast_stream_sent_packets_total", "counter", "Session packets sent, per stream.",
       [](const StreamGauges& s) { return static_cast<double>(s.totals.sent_packets); }},
      {"ncast_stream_held_segments", "gauge", "Segments held, per stream.",
       [](const StreamGauges& s) { return static_cast<double>(s.segments); }},
      {"ncast_stream_held_bytes", "gauge", "Octets of media held, per stream.",
       [](const StreamGauges& s) { return static_cast<double>(s.bytes); }},
  };
  for (const Series& x : series) {
    o << "# HELP " << x.name << ' ' << x.help << "\n# TYPE " << x.name << ' ' << x.type << '\n';
    for (const StreamGauges& s : g.per_stream)
      o << x.name << "{stream=\"" << escape_label(s.name) << "\"} " << x.value(s) << '\n';
  }
}

void render_sessions(std::ostringstream& o, const ServerMetrics& m, const ServerGauges& g) {
  gauge(o, "ncast_sessions", "Sessions open now.", static_cast<double>(g.sessions));
  counter(o, "ncast_sessions_created_total", "Sessions created.", static_cast<double>(m.sessions_created));
  o << "# HELP ncast_sessions_closed_total Sessions closed, by reason.\n# TYPE ncast_sessions_closed_total counter\n";
  const char* reasons[kCloseReasons] = {"bye", "idle", "shutdown", "handshake", "path_too_slow"};
  for (std::size_t i = 0; i < kCloseReasons; ++i)
    o << "ncast_sessions_closed_total{reason=\"" << reasons[i] << "\"} " << m.sessions_closed[i] << '\n';
  counter(o, "ncast_path_probes_total", "Probes sent to a peer's new address (path validation).",
          static_cast<double>(m.path_probes));
  counter(o, "ncast_path_migrations_total", "Sessions moved to a peer's new, validated address.",
          static_cast<double>(m.migrations));
}

}  // namespace

std::string render_prometheus(const ServerMetrics& m, const ServerGauges& g) {
  std::ostringstream o;
  o.precision(17);
  render_sessions(o, m, g);
  gauge(o, "ncast_streams", "Streams served.", static_cast<double>(g.streams));
  gauge(o, "ncast_stream_segments", "Segments held, all streams.", static_cast<double>(g.segments));
  gauge(o, "ncast_stream_bytes", "Octets of media held, all streams.", static_cast<double>(g.stream_bytes));
  per_stream(o, g);

  counter(o, "ncast_received_packets_total", "Datagrams received.", static_cast<double>(m.rx_packets));
  counter(o, "ncast_received_bytes_total", "Octets received.", static_cast<double>(m.rx_bytes));
  o << "# HELP ncast_dropped_packets_total Datagrams dropped, by reason.\n# TYPE ncast_dropped_packets_total counter\n";
  for (std::size_t i = 0; i < proto::kDropReasonCount; ++i) {
    const auto r = static_cast<proto::DropReason>(i);
    o << "ncast_dropped_packets_total{reason=\"" << proto::to_string(r) << "\"} " << m.drops[r] << '\n';
  }
  o << "# HELP ncast_sent_packets_total Packets sent, by type.\n# TYPE ncast_sent_packets_total counter\n";
  o << "ncast_sent_packets_total{type=\"retry\"} " << m.retries << '\n';
  o << "ncast_sent_packets_total{type=\"reject\"} " << m.rejects << '\n';
  o << "ncast_sent_packets_total{type=\"manifest\"} " << m.manifests << '\n';
  o << "ncast_sent_packets_total{type=\"segments\"} " << m.segments_packets << '\n';
  o << "ncast_sent_packets_total{type=\"coded\"} " << m.coded_packets << '\n';
  o << "ncast_sent_packets_total{type=\"bye\"} " << m.bye_packets << '\n';
  counter(o, "ncast_sent_systematic_total", "CODED packets that carried a source symbol.",
          static_cast<double>(m.systematic_packets));
  counter(o, "ncast_sent_bytes_total", "Octets sent.", static_cast<double>(g.bytes_out));
  counter(o, "ncast_hello_bytes_total", "Octets of HELLO received (unvalidated addresses).",
          static_cast<double>(m.hello_bytes));
  counter(o, "ncast_retry_bytes_total", "Octets of RETRY sent (to unvalidated addresses).",
          static_cast<double>(m.retry_bytes));
  counter(o, "ncast_reject_bytes_total", "Octets of REJECT sent.", static_cast<double>(m.reject_bytes));

  counter(o, "ncast_segments_completed_total", "Segments decoded by a peer, summed over sessions.",
          static_cast<double>(m.segments_completed));
  counter(o, "ncast_completed_symbols_sent_total", "Coded symbols sent for completed segments.",
          static_cast<double>(m.completed_symbols_sent));
  counter(o, "ncast_completed_source_symbols_total", "Source symbols of completed segments.",
          static_cast<double>(m.completed_source_symbols));
  o << "# HELP ncast_segment_overhead Coded symbols sent per source symbol, per completed segment.\n"
       "# TYPE ncast_segment_overhead histogram\n";
  for (std::size_t i = 0; i < kOverheadBuckets.size(); ++i)
    o << "ncast_segment_overhead_bucket{le=\"" << label(kOverheadBuckets[i]) << "\"} " << m.overhead_buckets[i] << '\n';
  o << "ncast_segment_overhead_bucket{le=\"+Inf\"} " << m.segments_completed << '\n';
  o << "ncast_segment_overhead_sum " << m.overhead_sum << '\n';
  o << "ncast_segment_overhead_count " << m.segments_completed << '\n';

  congestion_control(o, m);

  o << "# HELP ncast_engine_info The coding engine.\n# TYPE ncast_engine_info gauge\nncast_engine_info{engine=\""
    << g.engine << "\"} 1\n";
  counter(o, "ncast_engine_seconds_total", "Seconds spent in the coding engine.", g.engine_seconds);
  counter(o, "ncast_engine_symbols_total", "Coded symbols produced by the engine.",
          static_cast<double>(g.engine_symbols));
  counter(o, "ncast_engine_calls_total", "Engine calls.", static_cast<double>(g.engine_calls));
  counter(o, "ncast_coded_cache_hits_total", "Coded symbols served from the cache.", static_cast<double>(g.cache_hits));
  counter(o, "ncast_coded_cache_misses_total", "Chunks coded on demand.", static_cast<double>(g.cache_misses));
  counter(o, "ncast_coded_cache_evictions_total", "Segments evicted from the cache.",
          static_cast<double>(g.cache_evictions));
  gauge(o, "ncast_coded_cache_bytes", "Octets of coded symbols cached.", static_cast<double>(g.cache_bytes));
  counter(o, "ncast_host_cache_hits_total", "File segments found in the host segment cache.",
          static_cast<double>(g.host_cache_hits));
  counter(o, "ncast_host_cache_misses_total", "File segments read from disk into the host segment cache.",
          static_cast<double>(g.host_cache_misses));
  counter(o, "ncast_host_cache_evictions_total", "File segments evicted from the host segment cache.",
          static_cast<double>(g.host_cache_evictions));
  gauge(o, "ncast_host_cache_bytes", "Octets of file segments in the host segment cache.",
        static_cast<double>(g.host_cache_bytes));
  counter(o, "ncast_sendmmsg_calls_total", "sendmmsg calls.", static_cast<double>(g.sendmmsg_calls));
  counter(o, "ncast_gso_sends_total", "Messages sent as one UDP GSO super-datagram.", static_cast<double>(g.gso_sends));
  counter(o, "ncast_send_messages_total", "Messages sendmmsg sent: a GSO super-datagram or a single datagram each.",
          static_cast<double>(g.messages_out));
  counter(o, "ncast_send_would_block_total", "Sends deferred because the socket buffer was full.",
          static_cast<double>(g.would_block));
  counter(o, "ncast_send_errors_total", "Datagrams the kernel refused.", static_cast<double>(g.send_errors));
  gauge(o, "ncast_uptime_seconds", "Seconds since start.", g.uptime_s);
  counter(o, "process_cpu_seconds_total", "User and system CPU time of the server process, seconds.", g.cpu_seconds);
  return o.str();
}

std::string render_stats_line(const ServerMetrics& m, const ServerGauges& g, const ServerGauges& pg,
                              double interval_s) {
  nlohmann::json j;
  j["event"] = "stats";
  j["uptime_s"] = g.uptime_s;
  j["sessions"] = g.sessions;
  j["sessions_created"] = m.sessions_created;
  j["tx_mbit_s"] = interval_s > 0 ? 8e-6 * static_cast<double>(g.bytes_out - pg.bytes_out) / interval_s : 0.0;
  j["tx_packets_s"] = interval_s > 0 ? static_cast<double>(g.packets_out - pg.packets_out) / interval_s : 0.0;
  j["rx_packets"] = m.rx_packets;
  j["tx_packets"] = g.packets_out;
  j["coded_packets"] = m.coded_packets;
  j["segments_completed"] = m.segments_completed;
  j["overhead"] = m.completed_source_symbols
                      ? static_cast<double>(m.completed_symbols_sent) / static_cast<double>(m.completed_source_symbols)
                      : 0.0;
  j["engine_s"] = g.engine_seconds;
  j["cpu_s"] = g.cpu_seconds;
  j["engine_symbols"] = g.engine_symbols;
  j["host_cache_bytes"] = g.host_cache_bytes;
  j["drops"] = m.drops.total();
  j["would_block"] = g.would_block;
  return j.dump();
}

}  // namespace ncast::server
