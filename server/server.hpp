#pragma once
// The sending side of the protocol on one UDP socket: stateless retries, handshakes, thousands of
// sessions, and a scheduler that paces each session and the whole server and batches what they send.
// ncast-server runs one over its media streams; a relaying ncast-peer runs one over what it receives.
// Single-threaded: everything happens on the io_context's thread. Several run side by side over one
// port (ServerPool, ncast-server --threads): each its own socket (SO_REUSEPORT), sessions and thread.
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <string>
#include <unordered_map>
#include <vector>

#include "net/address.hpp"
#include "net/udp_socket.hpp"
#include "protocol/crypto.hpp"
#include "protocol/token.hpp"
#include "server/metrics.hpp"
#include "server/session.hpp"
#include "server/symbol_source.hpp"
#include "server/token_bucket.hpp"

namespace ncast::server {

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
  std::uint16_t max_ack_delay_ms = 5;
  std::uint32_t idle_timeout_ms = 10000;
  std::uint32_t token_lifetime_s = 30;
  double retry_rate = 20000;  // RETRY and REJECT per second, all addresses together
  double join_rate = 2000;    // sessions created per second
  std::size_t max_sessions = 10000;
  std::size_t socket_buffer = 4 << 20;
  // Wake-ups for pacing are rounded up to this grid, so that the sessions due within one tick are
  // served by one timer expiry and their packets leave in one sendmmsg. A session's token bucket holds
  // at least two datagrams, so the rounding delays packets by less than a tick and costs no rate. It
  // halves the server's CPU per packet at a few hundred paced peers; 1 µs is per-session timing.
  std::chrono::microseconds pacing_tick{1000};
  // A paced session waits until it may send this many datagrams, then sends them in a row: one UDP
  // GSO message instead of several, and one wake-up and receive at the peer (with UDP GRO), for a
  // delay of burst / rate (≈ 80 ms for 8 at 768 kbit/s) before the first of them. The end of each
  // round still goes one datagram at a time (Session::one_at_a_time).
  std::uint16_t pacing_burst = 8;
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
};
inline constexpr std::uint16_t kMaxPacedAckDelayMs = 100;

class Server final : private SessionObserver {
 public:
  Server(boost::asio::io_context& io, const ServerConfig& config, const proto::Ed25519Identity& identity);
  ~Server() override;

  // Streams are looked up by name; the source must outlive the server.
  void add_stream(SymbolSource& source);
  // Call when a stream gained segments or became final: its sessions are woken.
  void stream_changed(SymbolSource& source);
  void start();
  // Sends BYE(shutdown) to every session, flushes, stops; done() runs when finished.
  void shutdown(std::function<void()> done);

  net::Address local() const { return socket_.local(); }
  bool gso() const { return socket_.gso(); }
  const ServerConfig& config() const { return config_; }
  const ServerMetrics& metrics() const { return metrics_; }
  std::size_t session_count() const { return by_id_.size(); }
  std::size_t stream_count() const { return streams_.size(); }
  const net::SocketCounters& socket_counters() const { return socket_.counters(); }
  std::chrono::steady_clock::time_point started() const { return started_; }
  const std::map<std::string, SymbolSource*>& streams() const { return streams_; }

 private:
  struct JoinKey {
    net::Address address;
    proto::Nonce nonce;
    bool operator==(const JoinKey&) const = default;
  };
  struct JoinKeyHash {
    std::size_t operator()(const JoinKey& k) const;
  };
  // Sessions live in slots; wake-ups name the slot, so the scheduler reaches a session without a hash
  // lookup. Generations are unique within the server: a wake-up is current only while its slot's
  // generation is its own (not after a later wake-up, nor after the slot was freed and reused).
  struct Wake {
    TimePoint at;
    std::uint32_t slot;
    std::uint64_t generation;
    bool operator>(const Wake& o) const { return at > o.at; }
  };
  struct Entry {
    std::unique_ptr<Session> session;  // null: a free slot
    std::uint64_t generation = 0;      // of its latest wake-up; older ones in the heap are stale
    TimePoint due = TimePoint::max();  // that wake-up's time; max() when none is pending
  };

  void segment_completed(std::size_t sent, std::size_t n_s) override { metrics_.segment_completed(sent, n_s); }

  void read();
  void on_datagram(std::span<std::uint8_t> datagram, const net::Address& from, TimePoint now);
  void on_hello(const proto::Prefix& prefix, std::span<std::uint8_t> datagram, const net::Address& from, TimePoint now);
  void on_join(const proto::Prefix& prefix, std::span<std::uint8_t> datagram, const net::Address& from, TimePoint now);
  void on_protected(const proto::Prefix& prefix, std::span<std::uint8_t> datagram, const net::Address& from,
                    TimePoint now);
  // answered: the size of the datagram being answered, which bounds the reply to an unvalidated address.
  void send_retry(const proto::Nonce& nonce, const net::Address& from, std::size_t answered, TimePoint now);
  void send_reject(const proto::Nonce& nonce, const net::Address& from, proto::RejectReason reason,
                   std::uint32_t retry_after_ms, std::size_t answered, TimePoint now);
  bool within_amplification_limit(std::size_t reply, std::size_t answered);
  std::uint32_t now_seconds(TimePoint now) const;

  // Wakes the session of slot at `at` (rounded up to the pacing grid) unless a wake-up at or before it is
  // pending.
  void schedule(std::uint32_t slot, TimePoint at);
  void push_wake(std::uint32_t slot, TimePoint at);
  bool current(const Wake& w) const { return slots_[w.slot].session && slots_[w.slot].generation == w.generation; }
  TimePoint on_grid(TimePoint at) const;
  void arm_timer();
  void run_due(TimePoint now);
  void wait_writable();
  void housekeeping(TimePoint now);
  void close(std::uint32_t slot, CloseReason reason, bool say_bye);
  std::uint64_t new_session_id();
  SessionConfig session_config(const proto::Join& join, const SymbolSource& source) const;

  boost::asio::io_context& io_;
  ServerConfig config_;
  const proto::Ed25519Identity& identity_;
  net::UdpSocket socket_;
  proto::TokenMinter minter_;
  TokenBucket retry_bucket_, join_bucket_, rate_bucket_;
  std::map<std::string, SymbolSource*> streams_;
  std::vector<Entry> slots_;
  std::vector<std::uint32_t> free_slots_;
  std::unordered_map<std::uint64_t, std::uint32_t> by_id_;           // session id → slot
  std::unordered_map<JoinKey, std::uint32_t, JoinKeyHash> by_join_;  // → slot
  std::uint64_t generations_ = 0;
  std::priority_queue<Wake, std::vector<Wake>, std::greater<>> wakes_;
  boost::asio::steady_timer timer_, housekeeping_timer_;
  TimePoint timer_at_ = TimePoint::max();
  bool writable_wait_ = false, stopping_ = false;
  ServerMetrics metrics_;
  std::chrono::steady_clock::time_point started_;
};

}  // namespace ncast::server
