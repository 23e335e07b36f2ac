#pragma once
// Who may open a session on a Server: HELLO is answered with a stateless RETRY (or a REJECT), a JOIN's
// token validates its address, and a JOIN within the limits becomes a Session whose MANIFEST is sent.
// The Server keeps the sessions and their scheduling; it asks this part for new ones and answers its
// questions about those already open (OpenSessions).
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_set>

#include "net/address.hpp"
#include "net/udp_socket.hpp"
#include "protocol/crypto.hpp"
#include "protocol/handshake.hpp"
#include "protocol/token.hpp"
#include "server/metrics.hpp"
#include "server/server_config.hpp"
#include "server/session.hpp"
#include "server/symbol_source.hpp"
#include "server/table_seals.hpp"
#include "server/token_bucket.hpp"

namespace ncast::server {

// A handshake: the address that made it and its nonce.
struct JoinKey {
  net::Address address;
  proto::Nonce nonce;
  bool operator==(const JoinKey&) const = default;
};
struct JoinKeyHash {
  std::size_t operator()(const JoinKey& k) const;
};

// What admission needs to know of the sessions already open.
class OpenSessions {
 public:
  // The session opened by this address's JOIN with this nonce, or null.
  virtual Session* joined(const net::Address& from, const proto::Nonce& nonce) = 0;
  virtual bool id_in_use(std::uint64_t id) const = 0;
  virtual SessionObserver& observer() = 0;

 protected:
  ~OpenSessions() = default;
};

class Admission {
 public:
  // config, identity, socket, metrics and streams belong to the Server and outlive this.
  Admission(const ServerConfig& config, const proto::Ed25519Identity& identity, net::UdpSocket& socket,
            ServerMetrics& metrics, const std::map<std::string, SymbolSource*>& streams, TimePoint started);

  void on_hello(const proto::Prefix& prefix, std::span<std::uint8_t> datagram, const net::Address& from, TimePoint now);
  // The session this JOIN opens, its MANIFEST sent and a place counted in config.open_sessions (the
  // Server gives it back when the session closes); null when it opens none (answered or dropped).
  std::unique_ptr<Session> on_join(const proto::Prefix& prefix, std::span<std::uint8_t> datagram,
                                   const net::Address& from, TimePoint now, OpenSessions& sessions);
  // The session of this handshake closed: its JOIN, though its token may still be valid, opens no
  // other one (a replay after a BYE would).
  void retire(const JoinKey& handshake, TimePoint now);

 private:
  // A JOIN whose token checked out: from here on its address is validated.
  struct ValidJoin {
    proto::Join join;
    std::span<std::uint8_t> datagram;
    net::Address from;
  };

  // answered: the size of the datagram being answered, which bounds the reply to an unvalidated address.
  void send_retry(const proto::Nonce& nonce, const net::Address& from, std::size_t answered, TimePoint now);
  void send_reject(const proto::Nonce& nonce, const net::Address& from, proto::RejectReason reason,
                   std::uint32_t retry_after_ms, std::size_t answered, TimePoint now);
  void send_reject(const ValidJoin& j, proto::RejectReason reason, std::uint32_t retry_after_ms, TimePoint now) {
    send_reject(j.join.nonce, j.from, reason, retry_after_ms, j.datagram.size(), now);
  }
  bool within_amplification_limit(std::size_t reply, std::size_t answered);
  // A JOIN of a session already open: its MANIFEST was lost, or the JOIN is replayed.
  void answer_repeated_join(Session& open, const proto::Join& join, std::size_t size, const net::Address& from,
                            TimePoint now);
  std::uint32_t now_seconds(TimePoint now) const;

  // What a session opened by a JOIN gets.
  struct Terms {
    SymbolSource* source;
    proto::Suite suite;
    SessionConfig session;
  };

  // The terms of a valid JOIN's session, after its stream, suite, the session limits and its datagram
  // size are checked; nullopt when it was rejected.
  std::optional<Terms> admissible(const ValidJoin& j, TimePoint now);
  // Counts the new session against max_sessions; false (rejected) when others took the last places.
  bool reserve_place(const ValidJoin& j, TimePoint now);
  std::unique_ptr<Session> open_session(const ValidJoin& j, const Terms& terms, TimePoint now, OpenSessions& sessions);
  SessionConfig session_config(const proto::Join& join, const SymbolSource& source) const;
  static std::uint64_t new_session_id(const OpenSessions& sessions);
  // The origin's signatures a session of this stream sends: forwarded ones (a relay's stream), or this
  // server's own, made once per stream.
  TableSeals& seals_of(SymbolSource& source);
  // The stream's symbols sealed under its key for this suite, made when a first session uses it.
  SharedSymbols& shared_of(SymbolSource& source, proto::Suite suite);

  const ServerConfig& config_;
  const proto::Ed25519Identity& identity_;
  net::UdpSocket& socket_;
  ServerMetrics& metrics_;
  const std::map<std::string, SymbolSource*>& streams_;
  TimePoint started_;
  proto::TokenMinter minter_;
  TokenBucket retry_bucket_, join_bucket_;
  // Handshakes whose session closed, until their tokens expire; oldest first.
  std::unordered_set<JoinKey, JoinKeyHash> retired_;
  std::deque<std::pair<TimePoint, JoinKey>> retired_until_;
  std::map<const SymbolSource*, std::unique_ptr<OriginSeals>> origin_seals_;
  std::map<std::pair<const SymbolSource*, proto::Suite>, std::unique_ptr<SharedSymbols>> shared_;
};

// The MANIFEST body that tells a peer its session: the stream as it stands, its origin's certificate
// (session.seals) and the session's terms.
proto::ManifestBody manifest_body(const SymbolSource& source, const SessionConfig& session);

}  // namespace ncast::server
