#pragma once
// One peer's connection to one server (docs/protocol.md sections 2 and 7): the handshake with its
// retransmissions, the session's keys and replay window, ACKs on the protocol's schedule, and recovery
// by a new handshake when the server goes silent or says goodbye while data is still wanted. What
// arrives feeds the shared StreamReceiver.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "net/address.hpp"
#include "peer/shared_parts.hpp"
#include "peer/stream_receiver.hpp"
#include "protocol/coded_seal.hpp"
#include "protocol/crypto.hpp"
#include "protocol/drop_reason.hpp"
#include "protocol/handshake.hpp"
#include "protocol/packets.hpp"
#include "protocol/replay_window.hpp"

namespace ncast::peer {

struct LinkOptions {
  net::Address server;
  std::string stream;
  std::uint32_t start_segment = 0;  // kLiveEdge for the newest segment
  std::uint16_t window = 8;
  std::uint16_t share = proto::kFullShare;
  bool systematic = true;
  bool download = true;
  std::uint16_t max_datagram = proto::kMinDatagram;
  std::uint32_t max_rate_kbps = 0;
  std::optional<proto::PublicKey> pinned;
  std::chrono::milliseconds stall_timeout{2000};  // silence while data is expected that triggers a new handshake
  int max_attempts = 12;                          // per handshake step (docs/protocol.md section 7)
  // CODED shared parts hashed and opened once for all links of this thread (null: each link alone).
  std::shared_ptr<SharedParts> parts;
};

struct LinkCounters {
  // rejoins: new sessions joined after a silence or the server's BYE; resumes: sessions that came back
  // after a silence (an outage) while the new handshake was under way, which was then dropped.
  std::uint64_t packets = 0, bytes = 0, coded = 0, acks_sent = 0, handshakes = 0, rejoins = 0, resumes = 0;
  std::uint64_t reshares = 0;  // new sessions for another share after a server died or came back
  proto::DropCounters drops;
};

class ServerLink {
 public:
  enum class State : std::uint8_t { idle, hello, join, established, closed, failed };
  using Send = std::function<void(std::span<const std::uint8_t>)>;

  ServerLink(LinkOptions options, StreamReceiver& receiver);

  void start(TimePoint now, const Send& send);
  // A datagram from this link's server address. Returns true when it brought a segment to full rank.
  bool on_datagram(std::span<std::uint8_t> datagram, TimePoint now, const Send& send);
  // Retransmissions, ACKs, keepalives, silence detection.
  void poll(TimePoint now, const Send& send);
  // The earliest time at which poll() may act, as things stand: a caller with many links (the swarm's
  // worker) polls only those due. Input can make it earlier, so it is read again after input. Polling
  // sooner is harmless.
  TimePoint next_poll() const;
  // An ACK now, when established: another server's symbol brought a segment to full rank, and this one must
  // stop sending it too (its own next ACK could be 16 packets or a tick away).
  void acknowledge(TimePoint now, const Send& send);
  // Tells the server we are done (a final ACK and BYE) and closes.
  void close(const Send& send, proto::ByeReason reason);
  // Another share of the symbols, and the source symbols or not. The JOIN fixes a session's share, so
  // an established session is said goodbye to and a new one joined (it resumes where the receiver is);
  // otherwise the next JOIN carries it.
  void reshare(std::uint16_t share, bool systematic, TimePoint now, const Send& send);
  void fail(std::string why);

  State state() const { return state_; }
  const std::string& failure() const { return failure_; }
  const LinkOptions& options() const { return options_; }
  std::optional<std::uint32_t> server_id() const { return server_id_; }
  std::optional<proto::PublicKey> identity() const { return identity_; }
  // The origin the session's certificate names; and whether the link was caught forging its material.
  std::optional<proto::PublicKey> origin() const { return origin_; }
  bool forged() const { return forged_; }
  const LinkCounters& counters() const { return counters_; }
  // When the server was last heard from (an authentic packet of the session).
  TimePoint last_heard() const { return last_heard_; }
  // Joining again because the server went silent or said goodbye: it may be gone.
  bool recovering() const { return recovering_; }

 private:
  // A new handshake; keep_session: the session goes on standby (see standby_).
  void begin_handshake(TimePoint now, const Send& send, bool keep_session = false);
  // A packet of the session on standby arrived: the outage is over, the session goes on (true), or,
  // when its share changed meanwhile, says goodbye and a new one joins (false).
  bool resume(TimePoint now, const Send& send);
  void on_retry(const proto::Retry& retry, TimePoint now, const Send& send);
  void poll_handshake(TimePoint now, const Send& send);
  void on_manifest(const proto::Header& header, std::span<std::uint8_t> datagram, TimePoint now, const Send& send);
  // A protected packet's body, decrypted in place: the session key's, or for CODED the stream key's.
  std::optional<std::span<const std::uint8_t>> open_body(std::span<std::uint8_t> d, const proto::Header& header);
  bool coded_authentic(std::span<const std::uint8_t> d) const;
  bool on_protected(std::span<std::uint8_t> datagram, const proto::Header& header, TimePoint now, const Send& send);
  void note_identity_mismatch(const proto::Header& header, std::span<std::uint8_t> datagram, TimePoint now);
  // The session's origin: adopted when trusted, held while the origin's key is not (yet) trusted.
  void admit_origin(const proto::ManifestBody& body, TimePoint now, const Send& send);
  void on_segments(std::span<const std::uint8_t> body, TimePoint now, const Send& send);
  // Says BYE (protocol error) to a source that sent material its origin did not sign, and fails it.
  void convict(const std::string& why, const Send& send);
  void send_ack(TimePoint now, const Send& send);
  void send_bye(const Send& send, proto::ByeReason reason);
  void drop(proto::DropReason reason) { counters_.drops.count(reason); }

  LinkOptions options_;
  StreamReceiver& receiver_;
  State state_ = State::idle;
  std::string failure_;

  std::optional<proto::PeerHandshake> handshake_;
  std::vector<std::uint8_t> pending_;  // the HELLO or JOIN being retransmitted
  std::uint32_t asked_start_ = 0;      // the JOIN's start_segment
  int attempts_ = 0;
  int fresh_nonces_ = 0;    // handshakes begun again since the last MANIFEST because a JOIN went unanswered
  TimePoint join_sent_at_;  // the first JOIN of this nonce
  TimePoint retry_at_{};
  std::chrono::milliseconds backoff_{0};
  TimePoint hello_sent_at_{};  // the handshake's first HELLO: with its RETRY, an RTT
  // A sound MANIFEST signed by another identity than the pinned one: when, and whose.
  std::optional<std::pair<TimePoint, proto::PublicKey>> mismatch_;

  // The session.
  std::uint64_t session_ = 0;
  std::optional<proto::Aead> open_, seal_;
  // CODED packets: this session's authenticators, then the stream key's shared part (docs/protocol.md 2.8).
  std::optional<proto::Cmac> coded_mac_;
  std::optional<proto::Aead> stream_;
  std::vector<std::uint8_t> stream_key_;  // its octets: opens are shared only under the same key
  proto::ReplayWindow replay_;
  std::uint64_t next_number_ = 0;
  std::uint16_t max_datagram_ = proto::kMinDatagram;
  std::chrono::milliseconds max_ack_delay_{5}, idle_timeout_{10000};
  std::optional<std::uint32_t> server_id_;
  std::optional<proto::PublicKey> identity_;
  std::optional<proto::PublicKey> origin_;
  // A relay's MANIFEST whose origin no pin or origin session vouches for yet, and since when.
  std::optional<std::pair<TimePoint, proto::ManifestBody>> unvouched_;
  bool forged_ = false;
  std::uint64_t largest_ = 0;
  TimePoint largest_at_{};
  std::uint32_t received_ = 0;
  TimePoint last_heard_{}, last_ack_{};
  bool recovering_ = false;
  // Silent while data is expected, the link joins again but keeps the session: the silence may be an
  // outage that the server's session survives (it waits an idle timeout). Until the new MANIFEST or the
  // idle timeout, the session's packets are still read, and its ACKs still tell the server that we are
  // here; the first of its packets to arrive ends the handshake (issue 16: a blackhole of 5 s).
  bool standby_ = false;
  std::pair<std::uint16_t, bool> standby_share_{};  // the share and systematic flag it was joined with
  std::uint32_t unacked_ = 0;
  proto::AckBody ack_;  // the last ACK's body and datagram, their storage reused
  std::vector<std::uint8_t> ack_out_;
  TimePoint ack_due_ = TimePoint::max();
  bool ack_now_ = false;
  LinkCounters counters_;
};

}  // namespace ncast::peer
