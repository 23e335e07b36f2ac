#pragma once
// What a Server is told: its address, limits, rates and pacing.
#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

#include "net/address.hpp"
#include "protocol/packets.hpp"

namespace ncast::server {

class SourceLimits;

struct ServerConfig {
  net::Address listen = net::Address::parse("127.0.0.1:7700");
  std::uint16_t max_window = 16;
  double redundancy = 0.02;
  // Paced sessions send this much faster than the bitrate (beyond the measured loss), so that a peer
  // that fell behind (a stall of the host, a late round, a loss estimate below the truth) catches up
  // instead of staying behind for the rest of the stream; its window bounds how far ahead it gets.
  double headroom = 0.08;
  double session_rate = 100e6 / 8;  // octets/s: download sessions, and paced ones without a bitrate
  double max_rate = 1e9 / 8;        // octets/s, all sessions together
  std::uint16_t max_datagram = proto::kMinDatagram;
  // Sealed CODED shared parts kept per stream, suite and thread (SharedSymbols): at most 16 MiB, and no
  // more than --coded-cache-mb, whose symbols they mostly are.
  std::size_t sealed_cache_bytes = std::size_t{16} << 20;
  std::uint16_t max_ack_delay_ms = 5;
  std::uint32_t idle_timeout_ms = 10000;
  // A session whose peer has not acknowledged anything this long after its MANIFEST is freed: a peer
  // that completed the handshake and went silent (or never existed) holds no place for long.
  std::uint32_t handshake_timeout_ms = 3000;
  std::uint32_t token_lifetime_s = 30;
  double retry_rate = 20000;  // RETRY and REJECT per second, all addresses together
  double join_rate = 2000;    // sessions created per second
  std::size_t max_sessions = 10000;
  // Sessions one address may hold at once (its /24 or /64 four times as many; SourceLimits); 0: no limit.
  std::size_t max_sessions_per_source = 16;
  std::size_t socket_buffer = 4 << 20;
  // Wake-ups for pacing are rounded up to this grid, so that the sessions due within one tick are
  // served by one timer expiry and their packets leave in one sendmmsg (docs/streaming.md, "Pacing").
  // A session's token bucket holds at least two datagrams, so the rounding delays packets by less than
  // a tick and costs no rate; 1 µs is per-session timing.
  std::chrono::microseconds pacing_tick{1000};
  // A paced session waits until it may send this many datagrams, then sends them in a row: one UDP
  // GSO message instead of several, and one wake-up and receive at the peer (with UDP GRO), for a
  // delay of burst / rate (≈ 180 ms for 16 at 768 kbit/s) before the first of them. The end of each
  // round goes no more at once than the peer surely still needs (Session::in_a_row). A turn sends at
  // most 16 packets (Server), so a longer burst makes no longer runs.
  std::uint16_t pacing_burst = 16;
  // A paced session's peer may hold back an ACK for up to this many of the session's packet intervals
  // (at least max_ack_delay_ms, at most kMaxPacedAckDelayMs): at 768 kbit/s a peer then acknowledges
  // about once a burst instead of every packet, and each ACK costs the server a receive and an AEAD open
  // and the peer a send. A decoded segment is still acknowledged at once, so this delays no stop.
  double paced_ack_packets = 8;
  // Servers sharing a port: bind with SO_REUSEPORT, and mint and verify retry tokens with one key (a
  // JOIN may reach another thread than its HELLO did) and count sessions against one max_sessions.
  bool reuse_port = false;
  std::optional<std::array<std::uint8_t, 32>> token_key;
  std::shared_ptr<std::atomic<std::size_t>> open_sessions;
  std::shared_ptr<SourceLimits> sources;  // made from max_sessions_per_source when not given
};
inline constexpr std::uint16_t kMaxPacedAckDelayMs = 100;

}  // namespace ncast::server
