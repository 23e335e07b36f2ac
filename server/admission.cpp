#include "server/admission.hpp"

#include <algorithm>
#include <cstring>
#include <tuple>
#include <utility>

#include "server/source_limits.hpp"

namespace ncast::server {

std::size_t JoinKeyHash::operator()(const JoinKey& k) const {
  std::size_t h = net::AddressHash{}(k.address);
  for (auto b : k.nonce) h = (h ^ b) * 1099511628211ull;
  return h;
}

Admission::Admission(const ServerConfig& config, const proto::Ed25519Identity& identity, net::UdpSocket& socket,
                     ServerMetrics& metrics, const std::map<std::string, SymbolSource*>& streams, TimePoint started)
    : config_(config),
      identity_(identity),
      socket_(socket),
      metrics_(metrics),
      streams_(streams),
      started_(started),
      minter_(config.token_key ? proto::TokenMinter(*config.token_key, config.token_lifetime_s)
                               : proto::TokenMinter(config.token_lifetime_s)),
      retry_bucket_(config.retry_rate, std::max(1.0, config.retry_rate / 10)),
      join_bucket_(config.join_rate, std::max(1.0, config.join_rate / 10)) {}

std::uint32_t Admission::now_seconds(TimePoint now) const {
  return static_cast<std::uint32_t>(std::chrono::duration_cast<std::chrono::seconds>(now - started_).count());
}

// ---- HELLO, RETRY, REJECT ----

void Admission::on_hello(const proto::Prefix& prefix, std::span<std::uint8_t> d, const net::Address& from,
                         TimePoint now) {
  ++metrics_.hellos;
  metrics_.hello_bytes += d.size();
  if (prefix.version != proto::kVersion) {
    // Any version's HELLO is 64..1200 octets with the nonce at 4..19: answer with the versions we speak.
    if (d.size() < proto::kMinHelloSize || d.size() > proto::kMaxClearSize)
      return metrics_.drops.count(proto::DropReason::bad_version);
    proto::Nonce nonce{};
    std::memcpy(nonce.data(), d.data() + 4, nonce.size());
    metrics_.drops.count(proto::DropReason::bad_version);
    return send_reject(nonce, from, proto::RejectReason::unsupported_version, 0, d.size(), now);
  }
  auto hello = proto::decode_hello(prefix, d);
  if (!hello) return metrics_.drops.count(hello.error());
  if (!streams_.count(hello->stream))
    return send_reject(hello->nonce, from, proto::RejectReason::unknown_stream, 0, d.size(), now);
  send_retry(hello->nonce, from, d.size(), now);
}

bool Admission::within_amplification_limit(std::size_t reply, std::size_t answered) {
  // Before validation nothing may exceed three times what it answers (docs/protocol.md section 3).
  if (reply <= 3 * answered) return true;
  metrics_.drops.count(proto::DropReason::truncated);
  return false;
}

void Admission::send_retry(const proto::Nonce& nonce, const net::Address& from, std::size_t answered, TimePoint now) {
  if (!retry_bucket_.take(now)) return metrics_.drops.count(proto::DropReason::rate_limited);
  const auto token = minter_.mint(from, nonce, now_seconds(now));
  const auto packet = proto::encode(proto::Retry{nonce, {token.begin(), token.end()}});
  if (!within_amplification_limit(packet.size(), answered)) return;
  if (socket_.send_now(packet, from)) {
    ++metrics_.retries;
    metrics_.retry_bytes += packet.size();
  }
}

void Admission::send_reject(const proto::Nonce& nonce, const net::Address& from, proto::RejectReason reason,
                            std::uint32_t retry_after_ms, std::size_t answered, TimePoint now) {
  if (!retry_bucket_.take(now)) return metrics_.drops.count(proto::DropReason::rate_limited);
  proto::Reject r;
  r.nonce = nonce;
  r.reason = reason;
  r.retry_after_ms = retry_after_ms;
  if (reason == proto::RejectReason::unsupported_version) r.versions = {proto::kVersion};
  const auto packet = proto::encode(r);
  if (!within_amplification_limit(packet.size(), answered)) return;
  if (socket_.send_now(packet, from)) {
    ++metrics_.rejects;
    metrics_.reject_bytes += packet.size();
  }
}

// ---- JOIN ----

std::unique_ptr<Session> Admission::on_join(const proto::Prefix& prefix, std::span<std::uint8_t> d,
                                            const net::Address& from, TimePoint now, OpenSessions& sessions) {
  ++metrics_.joins;
  auto join = proto::decode_join(prefix, d);
  if (!join) {
    metrics_.drops.count(join.error());
    return nullptr;
  }
  if (!minter_.verify(join->token, from, join->nonce, now_seconds(now))) {
    // Expired, or minted before a restart: a fresh token lets the peer carry on by itself.
    metrics_.drops.count(proto::DropReason::bad_token);
    send_retry(join->nonce, from, d.size(), now);
    return nullptr;
  }
  if (retired_.count({from, join->nonce})) {
    metrics_.drops.count(proto::DropReason::replay);
    return nullptr;
  }
  if (Session* open = sessions.joined(from, join->nonce)) {
    answer_repeated_join(*open, *join, d.size(), from, now);
    return nullptr;
  }
  const ValidJoin valid{std::move(*join), d, from};
  const auto terms = admissible(valid, now);
  if (!terms || !reserve_place(valid, now)) return nullptr;
  return open_session(valid, *terms, now, sessions);
}

void Admission::answer_repeated_join(Session& open, const proto::Join& join, std::size_t size, const net::Address& from,
                                     TimePoint now) {
  // Only the JOIN of the session's own stream repeats it: another stream's name would have a short JOIN
  // draw a long MANIFEST.
  if (join.stream != open.source().info().name) return metrics_.drops.count(proto::DropReason::unexpected);
  open.answered(size);
  open.heard_join(now);
  if (!open.resend_manifest(now)) return metrics_.drops.count(proto::DropReason::rate_limited);
  socket_.send_now(open.manifest(), from);
  ++metrics_.manifests;
}

void Admission::retire(const JoinKey& handshake, TimePoint now) {
  while (!retired_until_.empty() && retired_until_.front().first <= now) {
    retired_.erase(retired_until_.front().second);
    retired_until_.pop_front();
  }
  if (retired_.insert(handshake).second)
    retired_until_.emplace_back(now + std::chrono::seconds(config_.token_lifetime_s), handshake);
}

std::optional<Admission::Terms> Admission::admissible(const ValidJoin& j, TimePoint now) {
  auto stream = streams_.find(j.join.stream);
  if (stream == streams_.end()) {
    send_reject(j, proto::RejectReason::unknown_stream, 0, now);
    return std::nullopt;
  }
  const auto suite = proto::choose_suite(j.join.suites);
  if (!suite) {
    send_reject(j, proto::RejectReason::no_suite, 0, now);
    return std::nullopt;
  }
  if (config_.open_sessions->load(std::memory_order_relaxed) >= config_.max_sessions) {
    send_reject(j, proto::RejectReason::busy, 1000, now);
    return std::nullopt;
  }
  // Before the join rate: a source at its limit must not use up everyone's session creations.
  if (!config_.sources->has_room(j.from)) {
    send_reject(j, proto::RejectReason::busy, 1000, now);
    return std::nullopt;
  }
  if (!join_bucket_.take(now)) {
    metrics_.drops.count(proto::DropReason::rate_limited);
    send_reject(j, proto::RejectReason::busy, 100, now);
    return std::nullopt;
  }
  SymbolSource& source = *stream->second;
  Terms terms{&source, *suite, session_config(j.join, source)};
  terms.session.seals = &seals_of(source);
  terms.session.shared = &shared_of(source, *suite);
  // The largest CODED packet of the stream must fit: explicit coefficients travel unless we encode.
  const std::size_t coefficients = source.can_send_systematic() ? 0 : source.info().n;
  if (proto::coded_packet_size(coefficients, source.info().symbol_size) > terms.session.max_datagram) {
    send_reject(j, proto::RejectReason::bad_request, 0, now);
    return std::nullopt;
  }
  return terms;
}

bool Admission::reserve_place(const ValidJoin& j, TimePoint now) {
  // Servers sharing the limits may race for the last places: the counts decide.
  if (!config_.sources->try_add(j.from)) {
    send_reject(j, proto::RejectReason::busy, 1000, now);
    return false;
  }
  if (config_.open_sessions->fetch_add(1, std::memory_order_relaxed) < config_.max_sessions) return true;
  config_.open_sessions->fetch_sub(1, std::memory_order_relaxed);
  config_.sources->remove(j.from);
  send_reject(j, proto::RejectReason::busy, 1000, now);
  return false;
}

std::unique_ptr<Session> Admission::open_session(const ValidJoin& j, const Terms& terms, TimePoint now,
                                                 OpenSessions& sessions) {
  const std::uint64_t id = new_session_id(sessions);
  auto accept =
      proto::server_accept(j.datagram, j.join, identity_, terms.suite, id, manifest_body(*terms.source, terms.session));
  if (!accept) {
    config_.open_sessions->fetch_sub(1, std::memory_order_relaxed);
    config_.sources->remove(j.from);
    metrics_.drops.count(proto::DropReason::malformed);  // a low-order public key
    return nullptr;
  }
  auto session = std::make_unique<Session>(id, j.from, j.join.nonce, *terms.source, accept->keys, terms.session,
                                           std::move(accept->manifest), sessions.observer(), now);
  session->answered(j.datagram.size());
  socket_.send_now(session->manifest(), j.from);
  ++metrics_.manifests;
  ++metrics_.sessions_created;
  return session;
}

TableSeals& Admission::seals_of(SymbolSource& source) {
  if (TableSeals* forwarded = source.forwarded_seals()) return *forwarded;
  auto& own = origin_seals_[&source];
  if (!own) own = std::make_unique<OriginSeals>(identity_, source);
  return *own;
}

SharedSymbols& Admission::shared_of(SymbolSource& source, proto::Suite suite) {
  auto& shared = shared_[{&source, suite}];
  if (!shared) shared = std::make_unique<SharedSymbols>(source, suite, config_.sealed_cache_bytes);
  return *shared;
}

std::uint64_t Admission::new_session_id(const OpenSessions& sessions) {
  for (;;) {
    std::uint8_t b[8];
    proto::random_bytes(b);
    std::uint64_t id = 0;
    for (auto x : b) id = id << 8 | x;
    if (id != 0 && !sessions.id_in_use(id)) return id;
  }
}

SessionConfig Admission::session_config(const proto::Join& join, const SymbolSource& source) const {
  const StreamInfo& info = source.info();
  SessionConfig c;
  c.window = std::min<std::uint16_t>(join.window, config_.max_window);
  c.share = join.share;
  c.systematic = (join.flags & proto::join_flags::systematic) && source.can_send_systematic();
  c.download = (join.flags & proto::join_flags::download) != 0;
  const double share = join.share / static_cast<double>(proto::kFullShare);
  // The bitrate is the media's; the datagrams carrying it are larger by their header and tag, so a
  // paced peer gets at least the bitrate in payload (else it falls behind playback by that overhead).
  const double framing = static_cast<double>(proto::coded_packet_size(0, info.symbol_size)) / info.symbol_size;
  c.rate = !c.download && info.bitrate > 0 ? info.bitrate / 8.0 * (1.0 + config_.headroom) * share * framing
                                           : config_.session_rate;
  if (join.max_rate_kbps > 0) c.rate = std::min(c.rate, join.max_rate_kbps * 1000.0 / 8.0);
  // The session follows the stream's bitrate as it is measured, unless the peer's cap holds it.
  const bool capped = join.max_rate_kbps > 0 && c.rate >= join.max_rate_kbps * 1000.0 / 8.0;
  c.bitrate = !c.download && !capped ? info.bitrate : 0;
  c.rate = std::max(c.rate, 1000.0);
  c.media_rate = !c.download && !capped && info.bitrate > 0 ? c.rate / (1.0 + config_.headroom) : 0;
  c.max_datagram = std::min(join.max_datagram, config_.max_datagram);
  c.burst = config_.pacing_burst;
  c.max_ack_delay_ms = config_.max_ack_delay_ms;
  if (!c.download && info.bitrate > 0) {
    const double interval_ms = 1e3 * static_cast<double>(proto::coded_packet_size(0, info.symbol_size)) / c.rate;
    const double paced = std::min<double>(kMaxPacedAckDelayMs, config_.paced_ack_packets * interval_ms);
    c.max_ack_delay_ms = static_cast<std::uint16_t>(std::max<double>(c.max_ack_delay_ms, paced));
  }
  c.idle_timeout_ms = config_.idle_timeout_ms;
  c.redundancy = config_.redundancy;
  const std::uint32_t count = source.segment_count();
  // A file has no edge to join: it is watched from its start.
  const std::uint32_t edge = info.live && count > 0 ? std::min(source.live_edge(), count - 1) : 0;
  c.start_segment = join.start_segment == proto::kLiveEdge ? edge : join.start_segment;
  // A segment the live window dropped is not served: the MANIFEST moves the peer to the oldest kept.
  c.start_segment = std::max(c.start_segment, source.first_segment());
  return c;
}

proto::ManifestBody manifest_body(const SymbolSource& source, const SessionConfig& session) {
  const StreamInfo& info = source.info();
  proto::ManifestBody body;
  body.server_id = info.server_id;
  body.stream_id = info.stream_id;
  body.name = info.name;
  body.n = info.n;
  body.symbol_size = info.symbol_size;
  body.bitrate = info.bitrate;
  body.segment_count = source.segment_count();
  body.stream_flags = static_cast<std::uint8_t>((source.final() ? proto::stream_flags::final : 0) |
                                                (info.live ? proto::stream_flags::live : 0));
  body.start_segment = session.start_segment;
  body.window = session.window;
  body.share = session.share;
  body.session_flags = static_cast<std::uint8_t>((session.systematic ? proto::join_flags::systematic : 0) |
                                                 (session.download ? proto::join_flags::download : 0));
  body.rate = static_cast<std::uint32_t>(std::min(session.rate * 8.0, 4.0e9));
  body.max_datagram = session.max_datagram;
  body.max_ack_delay_ms = session.max_ack_delay_ms;
  body.idle_timeout_ms = session.idle_timeout_ms;
  std::tie(body.origin, body.certificate) = session.seals->certificate();
  const proto::StreamKey& stream_key = session.shared->key();
  body.stream_suite = static_cast<std::uint8_t>(stream_key.suite);
  body.stream_key = stream_key.key;
  return body;
}

}  // namespace ncast::server
