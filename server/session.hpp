#pragma once
// One peer's session at a sender (docs/protocol.md section 9): its keys and replay window, its view of
// the peer (descriptors known, segments still needed, ranks), the window of segments in flight with the
// rounds of symbols sent for each, loss and RTT estimates, and its pacing budget. No I/O: the server
// hands it datagrams and asks it for packets.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "net/address.hpp"
#include "protocol/cmac.hpp"
#include "protocol/coded_seal.hpp"
#include "protocol/crypto.hpp"
#include "protocol/handshake.hpp"
#include "protocol/packets.hpp"
#include "protocol/replay_window.hpp"
#include "server/circuit_breaker.hpp"
#include "server/rate_controller.hpp"
#include "server/shared_symbols.hpp"
#include "server/symbol_source.hpp"
#include "server/table_seals.hpp"
#include "server/token_bucket.hpp"

namespace ncast::server {

using Clock = std::chrono::steady_clock;
using TimePoint = Clock::time_point;

struct SessionConfig {
  std::uint16_t window = 8;
  std::uint16_t share = proto::kFullShare;
  bool systematic = true;
  bool download = false;
  double rate = 1e6;          // octets per second
  std::uint64_t bitrate = 0;  // paced: the stream's bitrate (bit/s) that rate was set from
  // Paced: octets per second of datagrams that carry the stream at its bitrate (rate without the
  // headroom), what the circuit breaker holds the path to; 0: no breaker (no bitrate known).
  double media_rate = 0;
  std::uint16_t burst = 1;  // datagrams the token bucket holds at least: a paced wake-up's worth
  std::uint16_t max_datagram = proto::kMinDatagram;
  std::uint16_t max_ack_delay_ms = 5;
  std::uint32_t idle_timeout_ms = 10000;
  double redundancy = 0.02;
  std::uint32_t start_segment = 0;
  TableSeals* seals = nullptr;  // the origin's signatures its SEGMENTS carry; set before a session starts
  // The stream's symbols sealed once under the stream key the MANIFEST gives; set before a session starts.
  SharedSymbols* shared = nullptr;
};

// What a session tells its server about, for the metrics.
class SessionObserver {
 public:
  virtual ~SessionObserver() = default;
  // A segment was decoded by the peer after `sent` CODED packets of it from this session; n_s source symbols.
  virtual void segment_completed(std::size_t sent, std::size_t n_s) = 0;
};

struct SessionCounters {
  std::uint64_t packets_sent = 0, bytes_sent = 0, coded_sent = 0, systematic_sent = 0, segments_sent = 0;
  std::uint64_t acks = 0, rounds = 0, timeouts = 0;
  // The rate controller's congestion events, silences (no ACK within a timeout: a blackhole?), and the
  // times a download became a window flow in a queue others keep standing.
  std::uint64_t congestion_events = 0, silences = 0, window_entries = 0;
};

class Session {
 public:
  Session(std::uint64_t id, const net::Address& peer, const proto::Nonce& nonce, SymbolSource& source,
          const proto::SessionKeys& keys, const SessionConfig& config, std::vector<std::uint8_t> manifest,
          SessionObserver& observer, TimePoint now);

  std::uint64_t id() const { return id_; }
  const net::Address& peer() const { return peer_; }
  const proto::Nonce& nonce() const { return nonce_; }
  const std::vector<std::uint8_t>& manifest() const { return manifest_; }
  const SessionConfig& config() const { return config_; }
  SymbolSource& source() { return source_; }

  struct Inbound {
    std::optional<proto::DropReason> drop;  // set: the datagram was dropped for this reason
    std::optional<proto::ByeReason> bye;    // set: the peer closed the session
  };
  // A datagram with this session's id (the caller checked it), header parsed; from peer() or, when the
  // peer's address changed (a NAT rebinding), from another address (see probe_path).
  Inbound receive(std::span<std::uint8_t> datagram, const proto::Header& header, TimePoint now);

  // Path validation (docs/protocol.md section 3): an authentic packet of `received` octets came from
  // `from`, not peer(). The session probes that address with a packet of its own, an empty SEGMENTS
  // that the peer acknowledges at once, and keeps sending everything else to peer() until an ACK
  // acknowledges the probe: only a peer that receives at `from` can. The probe, written to out, or 0
  // when none is due (one per retransmission timeout, at most three times what came from there).
  std::size_t probe_path(std::span<std::uint8_t> out, const net::Address& from, std::size_t received, TimePoint now);
  // The address whose probe an ACK acknowledged, once; the caller moves the session there.
  std::optional<net::Address> take_validated_path() { return std::exchange(validated_, std::nullopt); }
  void move_to(const net::Address& to) { peer_ = to; }

  // A packet made by next_outgoing: len octets written to out, or a CODED packet that is the envelope's
  // header, the shared part (never copied: sent in place, and held alive by this pointer until then)
  // and the envelope's authenticator. len 0: none.
  struct Outgoing {
    std::size_t len = 0;
    std::shared_ptr<const SharedPart> shared;
    proto::CodedEnvelope envelope{};
  };
  // The next packet due now (out: at least max_datagram octets).
  Outgoing next_outgoing(std::span<std::uint8_t> out, TimePoint now);
  // The same written whole into out; its length, 0 when none is due.
  std::size_t next_packet(std::span<std::uint8_t> out, TimePoint now);
  std::size_t bye(std::span<std::uint8_t> out, proto::ByeReason reason);

  // Anti-amplification until the peer proves it receives (its first authentic packet): the session
  // sends at most three times what the peer sent it, the MANIFEST included (docs/protocol.md section 3).
  // The peer sent `bytes` for this session: its JOIN, or a retransmission of it.
  void answered(std::size_t bytes) { received_ += bytes; }
  // A retransmitted JOIN (its token valid for this address and nonce) shows that the peer still waits
  // for the MANIFEST: the handshake timeout counts from it, else a session whose MANIFESTs were all lost
  // within the timeout would close, and the peer's later JOINs be dropped as replays of a closed one.
  // The token's lifetime bounds how long replayed JOINs can hold it.
  void heard_join(TimePoint now) {
    if (!confirmed_) last_heard_ = now;
  }
  // Whether a retransmitted JOIN (already counted by answered()) may have the MANIFEST again: not after
  // the first ACK (the peer holds it), at most once per retransmission timeout, within the budget. If
  // so, it is counted as sent.
  bool resend_manifest(TimePoint now);

  // Pacing: a token bucket of octets at rate(), holding at least a burst of datagrams.
  double rate() const;
  std::size_t burst_bytes() const;
  // How many packets a paced session may send in a row now: no more than its peer surely still needs of
  // the segment being sent (at least one). The peer may complete the segment at any packet beyond that,
  // and a burst sent past its completion would be out before the full-rank ACK could stop it. Near a
  // round's end packets so go one at a time; a lossless path's round ends in bursts that end exactly
  // at full rank. Unlimited (the maximum) for a download session, or with no burst.
  std::size_t in_a_row() const;
  void refill(TimePoint now);
  // A download also within its controller's window (in a queue others keep standing: ACK-clocked).
  bool can_send(std::size_t bytes) const {
    return pacing_.available(static_cast<double>(bytes)) && (!config_.download || cc_.window_open());
  }
  void spend(std::size_t bytes) { pacing_.spend(static_cast<double>(bytes)); }
  // When next_packet may next have something without new input; max() when only input can wake it.
  TimePoint next_wake(TimePoint now) const;
  TimePoint pacing_ready(std::size_t bytes, TimePoint now) const;

  TimePoint last_heard() const { return last_heard_; }
  bool confirmed() const { return confirmed_; }
  bool peer_complete() const { return peer_complete_; }
  double loss_estimate() const { return loss_; }
  std::chrono::microseconds srtt() const { return srtt_; }
  const RateController& controller() const { return cc_; }
  // A paced session whose path has carried too little of its stream for too long (circuit breaker):
  // the server ends it with BYE path_too_slow.
  bool path_too_slow() const { return breaker_.tripped(); }
  // A paced session under way, judged by its circuit breaker; its totals as the breaker takes them.
  bool paced() const { return !config_.download && confirmed_ && breaker_.needed() > 0; }
  CircuitBreaker::Totals path_totals() const;
  const CircuitBreaker& breaker() const { return breaker_; }
  // Seconds of the stream the peer has decoded beyond what a player that started at its first decoded
  // segment would have played by now: how far it is from a stall (a player that started later is
  // further). None before its first segment, or without a known bitrate.
  std::optional<double> played_ahead(TimePoint now) const;
  // Its path, shared with sessions further from a stall, carries only `carried` octets per second of
  // each stream: the session ends as its breaker would.
  void end_on_shared_path(double carried) { breaker_.trip(carried); }
  // Other sessions on its path were ended instead (CircuitBreaker::restart). The loss it measured was
  // the queue's, which left with them: its estimate starts afresh.
  void kept_on_shared_path();
  const SessionCounters& counters() const { return counters_; }

 private:
  static constexpr std::chrono::microseconds kInitialRto{50'000};
  static constexpr std::chrono::microseconds kMaxRto{2'000'000};
  static constexpr double kMaxLoss = 0.9;  // loss beyond this is measured as this
  struct SentPacket {
    std::uint64_t number = 0;
    TimePoint at{};
  };
  struct LostPacket {
    std::uint64_t number = 0;
    TimePoint at{};
  };
  struct Flight {
    std::uint32_t segment = 0;
    std::uint32_t n_s = 0;
    std::uint32_t rank = 0;  // as last reported
    bool decoded = false;
    bool systematic = false;
    std::uint32_t sent = 0, target = 0;
    std::uint32_t next_systematic = 0, next_coded = 0;
    // The round is out: wait until its packets are acknowledged or declared lost, or for rto_at.
    bool waiting = false;
    bool rtt_sampled = false;  // an ACK covered round_last
    std::uint64_t round_last = 0;
    TimePoint round_sent{}, rto_at{};
    // The packets of its rounds neither acknowledged nor declared lost yet, and when the first of them
    // below the largest acknowledged counts as lost by time (max() when none is).
    std::vector<SentPacket> in_flight;
    TimePoint loss_at = TimePoint::max();
    int backoff = 0;
    // Waiting because the source had no more than the peer (a relay): its rank then. When the
    // source grows past it, sending resumes at once rather than at the timeout.
    std::optional<std::size_t> starved_at;
  };

  void on_ack(const proto::AckBody& ack, TimePoint now);
  void update_loss_estimate(const proto::AckBody& ack);
  void sample_rtt(std::chrono::microseconds sample);
  // Loss detection of RFC 9002 section 6.1 over a flight's packets in flight: those the ACK (if any)
  // covers leave, as do those below the largest acknowledged by the reordering threshold in packets or
  // in time. Sets the flight's loss_at for the rest.
  void settle(Flight& f, const proto::AckBody* ack, TimePoint now);
  bool lost(const SentPacket& p, TimePoint now) const;
  std::chrono::microseconds loss_delay() const;
  // A packet declared lost that the ACK covers after all was reordered: the thresholds grow to its
  // distance and delay (as QUIC stacks adapt theirs), so that reordering does not end rounds early.
  void detect_spurious_losses(const proto::AckBody& ack, TimePoint now);
  // An ACK came after a silence: waiting rounds probe at once.
  void resume(TimePoint now);
  // Every packet of the round is accounted for: the next round, sized by the peer's rank.
  void end_round(Flight& f, TimePoint now);
  Outgoing produce(std::span<std::uint8_t> out, TimePoint now);
  double paced_rate() const;
  // The RTT has grown well above what it was while the path last carried the stream calmly: a queue.
  bool queue_grown() const;
  bool behind_window() const;
  // The peer's ACK says it needs next_needed now: what it decoded since the last counts as played ahead.
  void count_decoded(std::uint32_t next_needed, TimePoint now);
  void refresh_window();
  Flight* pick(TimePoint now);
  std::uint32_t round_size(std::uint32_t deficit) const;
  std::uint32_t deficit(const Flight& f) const;
  std::chrono::microseconds rto(int backoff) const;
  double bucket_size() const;
  std::size_t seal(std::span<std::uint8_t> out, proto::PacketType type, const auto& write_body);
  // Accounts a packet of len octets just sent under next_number_.
  void count_sent(std::size_t len);
  std::size_t segments_packet(std::span<std::uint8_t> out, TimePoint now);
  // Octets the session may still send before the peer's first ACK; max() once it came.
  std::size_t unconfirmed_budget() const;
  // The next CODED packet of f, at most room octets; len 0 when the source cannot make it.
  Outgoing coded_packet(std::size_t room, Flight& f, TimePoint now);

  std::uint64_t id_;
  net::Address peer_;
  proto::Nonce nonce_;
  SymbolSource& source_;
  SessionConfig config_;
  std::vector<std::uint8_t> manifest_;
  SessionObserver& observer_;
  proto::Aead seal_, open_;
  proto::Cmac coded_mac_;  // CODED packets' authenticators
  proto::ReplayWindow replay_;
  std::uint64_t next_number_ = 1;  // the MANIFEST was 0

  // The peer, as its ACKs describe it.
  bool confirmed_ = false, peer_complete_ = false, peer_final_seen_ = false;
  std::uint32_t peer_known_ = 0, peer_next_needed_;
  // When the peer had decoded its first segment, and seconds of the stream it has decoded since.
  std::optional<TimePoint> first_decoded_at_;
  double decoded_seconds_ = 0;
  std::vector<proto::AckEntry> peer_entries_;
  // Where the loss sample in progress began: packets sent and lost as update_loss_estimate counts them.
  std::uint64_t last_sent_ = 0;
  std::int64_t last_lost_ = 0;
  std::uint32_t last_received_ = 0;
  bool have_ack_ = false, last_settled_ = false;
  double loss_ = 0;
  // loss_ and the path's minimum RTT when the circuit breaker last found that it carried the stream calmly.
  double calm_loss_ = 0;
  std::chrono::microseconds calm_rtt_{0};
  double loss_mean_ = 0;    // the average loss_ is the clamp of: below zero after reordered arrivals
  double loss_weight_ = 0;  // the share of loss_mean_'s weight that samples carry (the rest is its start, 0)

  std::chrono::microseconds srtt_{0}, rttvar_{0}, latest_rtt_{0};
  bool have_rtt_ = false;

  // Loss detection: the newest ACK (by its packet number: an older one overtaken by it says less), the
  // largest number acknowledged, the reordering thresholds, and recent packets declared lost.
  std::uint64_t newest_ack_ = 0, largest_acked_ = 0;
  std::uint64_t reorder_packets_;
  std::chrono::microseconds reorder_delay_{0};
  std::deque<LostPacket> lost_;
  std::uint64_t settled_ = 0;      // coded packets acknowledged or declared lost
  std::int64_t settled_lost_ = 0;  // of them declared lost, less those found reordered since

  // Before the first ACK: octets received from the peer, and sent to it (the MANIFEST's resends too).
  std::size_t received_ = 0, unconfirmed_sent_ = 0;
  TimePoint manifest_sent_at_;

  // Descriptors sent: all of 0..desc_sent_ (some may be lost: resent from the peer's `known` a timeout
  // after desc_sent_at_, when the oldest of them not yet acknowledged went out or the peer's `known` last
  // grew). Resends without progress back off exponentially: a peer that stopped acknowledging gets less
  // and less.
  std::uint32_t desc_sent_ = 0;
  int desc_backoff_ = 0;
  TimePoint desc_sent_at_{}, final_sent_at_{};
  bool final_sent_ = false;

  std::deque<Flight> flights_;  // increasing segments, within [base, base + window)

  // The address being validated: octets from it, the probe's number (0 before the first) and octets sent.
  struct PathProbe {
    net::Address to;
    std::size_t received = 0, sent = 0;
    std::uint64_t number = 0;
    TimePoint at{};
  };
  std::optional<PathProbe> probe_;
  std::optional<net::Address> validated_;

  RateController cc_;
  CircuitBreaker breaker_;
  TokenBucket pacing_;  // octets
  TimePoint last_heard_;
  SessionCounters counters_;
};

}  // namespace ncast::server
