#pragma once
// The server's counters, rendered as Prometheus text (/metrics) and as periodic JSON lines.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "protocol/drop_reason.hpp"
#include "protocol/packets.hpp"

namespace ncast::server {

// Coded symbols a session sent per segment the peer decoded, over the segment's n_s: 1.0 is perfect.
inline constexpr std::array<double, 8> kOverheadBuckets{1.0, 1.02, 1.05, 1.1, 1.25, 1.5, 2.0, 4.0};

// handshake: the peer never acknowledged its MANIFEST within the handshake timeout; path_too_slow: a
// paced session's circuit breaker tripped (BYE path_too_slow).
enum class CloseReason : std::uint8_t { bye, idle, shutdown, handshake, path_too_slow };
inline constexpr std::size_t kCloseReasons = 5;

// Per-session estimates, sampled once a second from every session with an ACK: the delivery rate
// (bit/s) and the smoothed RTT (seconds).
inline constexpr std::array<double, 10> kRateBuckets{1e5, 3e5, 1e6, 3e6, 1e7, 3e7, 1e8, 3e8, 1e9, 1e10};
inline constexpr std::array<double, 10> kRttBuckets{1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 0.1, 0.3, 1, 3};

// A Prometheus histogram: cumulative bucket counts.
template <std::size_t N>
struct Histogram {
  std::array<std::uint64_t, N> buckets{};  // cumulative: ≤ bound
  std::uint64_t count = 0;
  double sum = 0;
  void observe(const std::array<double, N>& bounds, double v) {
    ++count;
    sum += v;
    for (std::size_t i = 0; i < N; ++i)
      if (v <= bounds[i]) ++buckets[i];
  }
  Histogram& operator+=(const Histogram& o) {
    for (std::size_t i = 0; i < N; ++i) buckets[i] += o.buckets[i];
    count += o.count;
    sum += o.sum;
    return *this;
  }
};

struct ServerMetrics {
  // Input.
  std::uint64_t rx_packets = 0, rx_bytes = 0;
  proto::DropCounters drops;
  // Handshake, with the bytes that bound amplification toward unvalidated addresses.
  std::uint64_t hellos = 0, hello_bytes = 0, retries = 0, retry_bytes = 0, rejects = 0, reject_bytes = 0;
  std::uint64_t joins = 0, manifests = 0;
  // Sessions.
  std::uint64_t sessions_created = 0;
  std::array<std::uint64_t, kCloseReasons> sessions_closed{};
  // Path validation: probes sent to a peer's new address, and sessions moved there.
  std::uint64_t path_probes = 0, migrations = 0;
  // Output by packet type (protected ones), in packets and octets.
  std::uint64_t coded_packets = 0, systematic_packets = 0, segments_packets = 0, bye_packets = 0, tx_bytes = 0;
  // Completed segments and the coded symbols they took.
  std::uint64_t segments_completed = 0, completed_symbols_sent = 0, completed_source_symbols = 0;
  std::array<std::uint64_t, kOverheadBuckets.size()> overhead_buckets{};  // cumulative: ≤ bound
  double overhead_sum = 0;
  // Congestion control (docs/streaming.md): controllers' congestion events, silences (no ACK within a
  // timeout: probing), circuit-breaker trips, downloads that became window flows in a queue others keep
  // standing, and the sessions' estimates.
  std::uint64_t congestion_events = 0, silences = 0, breaker_trips = 0, window_entries = 0;
  Histogram<kRateBuckets.size()> session_rate;
  Histogram<kRttBuckets.size()> session_rtt;

  void segment_completed(std::size_t sent, std::size_t n_s);
  // Adds another server's counters (the threads of one ncast-server).
  ServerMetrics& operator+=(const ServerMetrics& other);
};

// What the sessions of one stream did (summed over the threads of a server).
struct StreamTotals {
  std::size_t sessions = 0;  // open now
  std::uint64_t sent_packets = 0, sent_bytes = 0;
  StreamTotals& operator+=(const StreamTotals& other);
};

// One stream as /metrics shows it, labelled by its name.
struct StreamGauges {
  std::string name;
  std::uint64_t segments = 0, bytes = 0;  // held
  StreamTotals totals;
};

// Everything else a render shows: gauges and counters owned by other parts.
struct ServerGauges {
  std::size_t sessions = 0, streams = 0;
  std::uint64_t stream_bytes = 0, segments = 0;
  std::uint64_t engine_symbols = 0, engine_calls = 0;
  double engine_seconds = 0;
  std::uint64_t cache_hits = 0, cache_misses = 0, cache_evictions = 0, cache_bytes = 0;
  // The host segment cache of files read on demand (--host-memory-mb).
  std::uint64_t host_cache_hits = 0, host_cache_misses = 0, host_cache_evictions = 0, host_cache_bytes = 0;
  std::uint64_t sendmmsg_calls = 0, gso_sends = 0, would_block = 0, send_errors = 0, packets_out = 0, bytes_out = 0;
  std::uint64_t messages_out = 0;
  std::string engine;
  double uptime_s = 0;
  double cpu_seconds = 0;  // the process's user + system time: what serving costs (ncast-bench serve)
  std::vector<StreamGauges> per_stream;
};

std::string render_prometheus(const ServerMetrics& m, const ServerGauges& g);
// One line of JSON (no newline): the totals, and rates over the interval_s since `previous`.
std::string render_stats_line(const ServerMetrics& m, const ServerGauges& g, const ServerGauges& previous,
                              double interval_s);

}  // namespace ncast::server
