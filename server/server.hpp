#pragma once
// The sending side of the protocol on one UDP socket: stateless retries, handshakes, thousands of
// sessions, and a scheduler that paces each session and the whole server and batches what they send.
// ncast-server runs one over its media streams; a relaying ncast-peer runs one over what it receives.
// Single-threaded: everything happens on the io_context's thread. Several run side by side over one
// port (ServerPool, ncast-server --threads): each its own socket (SO_REUSEPORT), sessions and thread.
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

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
#include "server/admission.hpp"
#include "server/closing_sessions.hpp"
#include "server/metrics.hpp"
#include "server/pacing_ticker.hpp"
#include "server/server_config.hpp"
#include "server/session.hpp"
#include "server/symbol_source.hpp"
#include "server/token_bucket.hpp"

namespace ncast::server {

class Server final : private SessionObserver, private OpenSessions {
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
  // Per stream name: its sessions open now and what all its sessions sent, closed ones included.
  std::map<std::string, StreamTotals> stream_totals() const;
  std::size_t stream_count() const { return streams_.size(); }
  const net::SocketCounters& socket_counters() const { return socket_.counters(); }
  std::chrono::steady_clock::time_point started() const { return started_; }
  const std::map<std::string, SymbolSource*>& streams() const { return streams_; }

 private:
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
    TimePoint added{};                 // when the session opened
    // A paced session's totals at the last look at shared paths, and when (the epoch: none yet).
    CircuitBreaker::Totals path_sample;
    TimePoint path_sampled{};
  };

  void segment_completed(std::size_t sent, std::size_t n_s) override { metrics_.segment_completed(sent, n_s); }

  // OpenSessions, for admission.
  Session* joined(const net::Address& from, const proto::Nonce& nonce) override;
  bool id_in_use(std::uint64_t id) const override { return by_id_.count(id) != 0; }
  SessionObserver& observer() override { return *this; }

  // Waits for input unless parked; reads what came, and runs the scheduler.
  void read();
  void take_input();
  // Parked, the socket is out of the reactor's watch and the pacing timer reads input when it fires.
  void park(bool on);
  bool parked() const { return !socket_.watched(); }
  // The scheduler's run, after reading input if parked.
  void run_parked();
  void on_datagram(std::span<std::uint8_t> datagram, const net::Address& from, TimePoint now);
  void on_join(const proto::Prefix& prefix, std::span<std::uint8_t> datagram, const net::Address& from, TimePoint now);
  void on_protected(const proto::Prefix& prefix, std::span<std::uint8_t> datagram, const net::Address& from,
                    TimePoint now);
  void add_session(std::unique_ptr<Session> session, TimePoint now);

  // Wakes the session of slot at `at` (rounded up to the pacing grid) unless a wake-up at or before it is
  // pending.
  void schedule(std::uint32_t slot, TimePoint at);
  void push_wake(std::uint32_t slot, TimePoint at);
  bool current(const Wake& w) const { return slots_[w.slot].session && slots_[w.slot].generation == w.generation; }
  TimePoint on_grid(TimePoint at) const;
  void arm_timer();
  void run_due(TimePoint now);
  // How one session's turn in a run ended: when it comes back (max(): only input wakes it), or that the
  // socket would block.
  struct TurnEnd {
    TimePoint next;
    bool blocked;
  };
  // Sends the session's datagrams due now, at most `budget` (which it lowers) and a turn's worth.
  TurnEnd take_turn(std::uint32_t slot, std::size_t& budget, TimePoint now);
  // When a turn that sent `sent` datagrams must stop before the next one; nullopt: it may send it.
  std::optional<TimePoint> turn_limit(const Session& s, std::size_t in_a_row, std::size_t first, std::size_t sent,
                                      std::size_t budget, TimePoint now) const;
  // Queues the session's next datagram on the socket and counts it; its length, 0 when it had none.
  std::size_t send_next(Session& s, TimePoint now);
  void wait_writable();
  void housekeeping(TimePoint now);
  // Ends the newest paced sessions of each peer address whose path carries fewer streams than it has
  // (beyond_shared_path), from what each got through since the last look.
  void shed_shared_paths(TimePoint now);
  void close(std::uint32_t slot, CloseReason reason, bool say_bye);
  // An authentic packet of the session came from `to`, not its address: probe it (Session::probe_path).
  void probe_path(Session& s, const net::Address& to, std::size_t received, TimePoint now);
  // Sends a datagram kept from before (a closing session's BYE) as it is.
  void send_again(std::span<const std::uint8_t> datagram, const net::Address& to);
  // The peer receives at `to` (its probe was acknowledged): the session moves there.
  void migrate(std::uint32_t slot, const net::Address& to, TimePoint now);

  boost::asio::io_context& io_;
  ServerConfig config_;
  net::UdpSocket socket_;
  TokenBucket rate_bucket_;
  std::map<std::string, SymbolSource*> streams_;
  std::vector<Entry> slots_;
  std::vector<std::uint32_t> free_slots_;
  std::unordered_map<std::uint64_t, std::uint32_t> by_id_;           // session id → slot
  std::unordered_map<JoinKey, std::uint32_t, JoinKeyHash> by_join_;  // → slot
  std::uint64_t generations_ = 0;
  std::priority_queue<Wake, std::vector<Wake>, std::greater<>> wakes_;
  PacingTicker ticker_;
  boost::asio::steady_timer housekeeping_timer_;
  bool writable_wait_ = false, stopping_ = false, reading_ = false;
  ServerMetrics metrics_;
  std::map<const SymbolSource*, StreamTotals> closed_totals_;  // what closed sessions sent, per stream
  std::chrono::steady_clock::time_point started_;
  TimePoint sampled_at_{};       // when the sessions' estimates last went into the histograms
  TimePoint shared_paths_at_{};  // the last look at shared paths
  Admission admission_;
  ClosingSessions closing_;
};

}  // namespace ncast::server
