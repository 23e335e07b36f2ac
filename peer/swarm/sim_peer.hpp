#pragma once
// One simulated peer of a swarm: the ncast-peer protocol machinery (ServerLink per server, one
// StreamReceiver that decodes and verifies every segment) on an io_context shared with many other
// peers and polled by their worker's tick rather than timers of its own, on a socket that it may share
// with other peers of its worker under an address of its own (peer/swarm/socket_group.hpp). The
// path to the servers is emulated: arriving datagrams go through a loss process, and both directions
// can be delayed with jitter. The decoded stream is not kept: each segment is verified (SHA-256) and fed
// to a model player (Playback) that counts what would have been late at the stream's bitrate. A
// counting peer (SimPeerOptions::verify false) authenticates every datagram and acknowledges as a
// decoding one, but tracks ranks only: its segments reach the player at full rank, unverified.
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <queue>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "net/address.hpp"
#include "peer/decode_batcher.hpp"
#include "peer/server_link.hpp"
#include "peer/server_links.hpp"
#include "peer/stream_receiver.hpp"
#include "peer/swarm/playback.hpp"
#include "peer/swarm/socket_group.hpp"

namespace ncast::swarm {

using peer::Clock;
using peer::TimePoint;

struct SimPeerOptions {
  std::vector<net::Address> servers;  // each supplies an equal share; the first the systematic symbols
  std::string stream;
  std::uint16_t window = 4;
  bool realtime = true;  // paced at the stream's bitrate; otherwise download (as fast as allowed)
  std::uint16_t max_datagram = 1232;
  std::chrono::milliseconds stall_timeout{2000};
  std::chrono::duration<double> startup{1.0};  // the player's buffer before playback starts
  std::chrono::microseconds delay{0};          // one way, each direction
  std::chrono::microseconds jitter{0};         // each datagram's delay is delay ± up to jitter
  std::uint64_t seed = 1;
  std::size_t socket_buffer = 512 << 10;
  std::shared_ptr<peer::DecodeBatcher> batcher;  // decodes the peer's segments with others'; null: the CPU, alone
  // false: a counting peer, which tracks each segment's rank from the coefficients alone
  // (peer/counting_decoder.hpp) and neither decodes nor verifies: the same traffic and ACKs for the
  // servers at a fraction of the CPU.
  bool verify = true;
  std::shared_ptr<peer::SharedParts> parts;  // its thread's, for the links (null: each hashes and opens alone)
};

class SimPeer final : private GroupMember {
 public:
  enum class Status : std::uint8_t { running, complete, failed, left };
  using Drop = std::function<bool(TimePoint)>;  // the loss process: true drops the datagram arriving then

  SimPeer(boost::asio::io_context& io, std::uint32_t id, SimPeerOptions options, Drop drop, SocketGroups& sockets);
  ~SimPeer();
  SimPeer(const SimPeer&) = delete;
  SimPeer& operator=(const SimPeer&) = delete;

  void start(TimePoint now);
  // Retransmissions, ACKs, silence detection, completion: the worker calls it on its tick once
  // next_poll() has come.
  void poll(TimePoint now);
  // When poll() may next have something to do (kept up to date after every poll and input).
  TimePoint next_poll() const { return next_poll_; }
  // Segments decoded by the batcher are verified and written, and the servers hear of it at once.
  void on_decoded(TimePoint now);
  // Churn: the peer goes away now, saying BYE (polite) or simply falling silent.
  void leave(bool polite, TimePoint now);
  // The run is over: a peer still running failed.
  void give_up(const std::string& why, TimePoint now);

  std::uint32_t id() const { return id_; }
  // Where the servers see it from (while it runs).
  const net::Address& address() const { return place_.local; }
  Status status() const { return status_; }
  bool realtime() const { return options_.realtime; }
  bool verifies() const { return options_.verify; }
  std::uint64_t symbols_received() const { return receiver_.stats().symbols; }
  std::uint64_t bytes_written() const { return receiver_.stats().bytes_written; }
  std::uint64_t symbols_needed() const { return receiver_.stats().symbols_needed; }
  std::uint64_t coded_arrived() const { return coded_arrived_; }
  std::uint64_t datagrams_lost() const { return lost_; }
  nlohmann::json report() const;

 private:
  struct Delayed {
    TimePoint due;
    std::uint64_t order;  // first in, first out among equal times
    bool inbound;
    std::size_t link;  // inbound: the link it is for; outbound: the server it goes to
    std::vector<std::uint8_t> bytes;
    bool operator>(const Delayed& o) const { return due != o.due ? due > o.due : order > o.order; }
  };

  void on_datagram(std::span<std::uint8_t> datagram, const net::Address& from, TimePoint now) override;
  // Past the emulated delay: the loss process, then the link.
  void arrive(std::size_t link, std::span<std::uint8_t> datagram, TimePoint now);
  void transmit(std::size_t link, std::span<const std::uint8_t> datagram);
  void send_raw(std::size_t link, std::span<const std::uint8_t> datagram);
  TimePoint delayed_until(TimePoint now);
  void arm_delay_timer();
  void run_delayed();
  void after_input(TimePoint now) override;
  void finish(Status status, TimePoint now);
  TimePoint earliest_poll() const;

  // First, with the status: the worker reads these of every peer on every tick.
  TimePoint next_poll_ = TimePoint::min();
  Status status_ = Status::running;
  boost::asio::io_context& io_;
  std::uint32_t id_;
  SimPeerOptions options_;
  Drop drop_;
  SocketGroups& sockets_;
  SocketGroups::Place place_;
  peer::StreamReceiver receiver_;
  std::optional<Playback> playback_;  // from the first segment on, at the manifest's bitrate
  peer::ServerLinks links_;
  std::vector<peer::ServerLink::Send> senders_;
  std::vector<std::uint8_t> tx_copy_;

  bool delayed_path_ = false;
  std::priority_queue<Delayed, std::vector<Delayed>, std::greater<>> delayed_;
  std::uint64_t delay_order_ = 0;
  boost::asio::steady_timer delay_timer_;
  TimePoint delay_timer_at_ = TimePoint::max();
  std::uint64_t jitter_state_;

  std::string failure_;
  TimePoint started_{}, ended_{};
  std::optional<TimePoint> completed_at_;
  std::uint64_t coded_arrived_ = 0, lost_ = 0, lost_coded_ = 0, unknown_source_ = 0, send_errors_ = 0;
};

}  // namespace ncast::swarm
