#include "server/server.hpp"

#include <algorithm>
#include <cstring>

#include "protocol/handshake.hpp"

namespace ncast::server {
namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {

constexpr std::size_t kPacketsPerTurn = 16;   // a session's packets before the next session's turn
constexpr std::size_t kPacketsPerRun = 4096;  // packets per scheduler run before input is read again
constexpr auto kHousekeeping = 100ms;

}  // namespace

std::size_t Server::JoinKeyHash::operator()(const JoinKey& k) const {
  std::size_t h = net::AddressHash{}(k.address);
  for (auto b : k.nonce) h = (h ^ b) * 1099511628211ull;
  return h;
}

Server::Server(asio::io_context& io, const ServerConfig& config, const proto::Ed25519Identity& identity)
    : io_(io),
      config_(config),
      identity_(identity),
      socket_(io, config.listen, config.socket_buffer, config.max_datagram, config.reuse_port),
      minter_(config.token_key ? proto::TokenMinter(*config.token_key, config.token_lifetime_s)
                               : proto::TokenMinter(config.token_lifetime_s)),
      retry_bucket_(config.retry_rate, std::max(1.0, config.retry_rate / 10)),
      join_bucket_(config.join_rate, std::max(1.0, config.join_rate / 10)),
      rate_bucket_(config.max_rate, std::max(config.max_rate * 0.002, 64.0 * config.max_datagram)),
      timer_(io),
      housekeeping_timer_(io),
      started_(Clock::now()) {
  if (!config_.open_sessions) config_.open_sessions = std::make_shared<std::atomic<std::size_t>>(0);
  if (config_.pacing_tick <= std::chrono::microseconds::zero()) config_.pacing_tick = std::chrono::microseconds(1);
}

Server::~Server() = default;

void Server::add_stream(SymbolSource& source) { streams_[source.info().name] = &source; }

void Server::stream_changed(SymbolSource& source) {
  const TimePoint now = Clock::now();
  for (std::uint32_t slot = 0; slot < slots_.size(); ++slot)
    if (slots_[slot].session && &slots_[slot].session->source() == &source) schedule(slot, now);
  arm_timer();
}

void Server::start() {
  read();
  housekeeping(Clock::now());
}

std::uint32_t Server::now_seconds(TimePoint now) const {
  return static_cast<std::uint32_t>(std::chrono::duration_cast<std::chrono::seconds>(now - started_).count());
}

// ---- input ----

void Server::read() {
  socket_.asio().async_wait(asio::ip::udp::socket::wait_read, [this](const boost::system::error_code& ec) {
    if (ec || stopping_) return;
    const TimePoint now = Clock::now();
    socket_.receive([&](std::span<std::uint8_t> d, const net::Address& from) { on_datagram(d, from, now); });
    run_due(Clock::now());
    read();
  });
}

void Server::on_datagram(std::span<std::uint8_t> d, const net::Address& from, TimePoint now) {
  ++metrics_.rx_packets;
  metrics_.rx_bytes += d.size();
  auto prefix = proto::parse_prefix(d);
  if (!prefix) return metrics_.drops.count(prefix.error());
  switch (prefix->type) {
    case proto::PacketType::hello: return on_hello(*prefix, d, from, now);
    case proto::PacketType::join:
      if (prefix->version != proto::kVersion) return metrics_.drops.count(proto::DropReason::bad_version);
      return on_join(*prefix, d, from, now);
    case proto::PacketType::ack:
    case proto::PacketType::bye:
    case proto::PacketType::coded:
    case proto::PacketType::segments:
    case proto::PacketType::manifest: return on_protected(*prefix, d, from, now);
    default: return metrics_.drops.count(proto::DropReason::unexpected);
  }
}

void Server::on_hello(const proto::Prefix& prefix, std::span<std::uint8_t> d, const net::Address& from, TimePoint now) {
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

bool Server::within_amplification_limit(std::size_t reply, std::size_t answered) {
  // Before validation nothing may exceed three times what it answers (docs/protocol.md section 3).
  if (reply <= 3 * answered) return true;
  metrics_.drops.count(proto::DropReason::truncated);
  return false;
}

void Server::send_retry(const proto::Nonce& nonce, const net::Address& from, std::size_t answered, TimePoint now) {
  if (!retry_bucket_.take(now)) return metrics_.drops.count(proto::DropReason::rate_limited);
  const auto token = minter_.mint(from, nonce, now_seconds(now));
  const auto packet = proto::encode(proto::Retry{nonce, {token.begin(), token.end()}});
  if (!within_amplification_limit(packet.size(), answered)) return;
  if (socket_.send_now(packet, from)) {
    ++metrics_.retries;
    metrics_.retry_bytes += packet.size();
  }
}

void Server::send_reject(const proto::Nonce& nonce, const net::Address& from, proto::RejectReason reason,
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

SessionConfig Server::session_config(const proto::Join& join, const SymbolSource& source) const {
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
  c.rate = std::max(c.rate, 1000.0);
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
  c.start_segment = join.start_segment == proto::kLiveEdge ? (count > 0 ? count - 1 : 0) : join.start_segment;
  return c;
}

std::uint64_t Server::new_session_id() {
  for (;;) {
    std::uint8_t b[8];
    proto::random_bytes(b);
    std::uint64_t id = 0;
    for (auto x : b) id = id << 8 | x;
    if (id != 0 && !by_id_.count(id)) return id;
  }
}

void Server::on_join(const proto::Prefix& prefix, std::span<std::uint8_t> d, const net::Address& from, TimePoint now) {
  ++metrics_.joins;
  auto join = proto::decode_join(prefix, d);
  if (!join) return metrics_.drops.count(join.error());
  if (!minter_.verify(join->token, from, join->nonce, now_seconds(now))) {
    // Expired, or minted before a restart: a fresh token lets the peer carry on by itself.
    metrics_.drops.count(proto::DropReason::bad_token);
    send_retry(join->nonce, from, d.size(), now);
    return;
  }
  // The address is validated from here on.
  if (auto it = by_join_.find({from, join->nonce}); it != by_join_.end()) {
    // A retransmitted JOIN: the MANIFEST was lost.
    socket_.send_now(slots_[it->second].session->manifest(), from);
    ++metrics_.manifests;
    return;
  }
  auto stream = streams_.find(join->stream);
  if (stream == streams_.end())
    return send_reject(join->nonce, from, proto::RejectReason::unknown_stream, 0, d.size(), now);
  const auto suite = proto::choose_suite(join->suites);
  if (!suite) return send_reject(join->nonce, from, proto::RejectReason::no_suite, 0, d.size(), now);
  if (config_.open_sessions->load(std::memory_order_relaxed) >= config_.max_sessions)
    return send_reject(join->nonce, from, proto::RejectReason::busy, 1000, d.size(), now);
  if (!join_bucket_.take(now)) {
    metrics_.drops.count(proto::DropReason::rate_limited);
    return send_reject(join->nonce, from, proto::RejectReason::busy, 100, d.size(), now);
  }
  // Servers sharing the limit may race for the last places: the count decides.
  if (config_.open_sessions->fetch_add(1, std::memory_order_relaxed) >= config_.max_sessions) {
    config_.open_sessions->fetch_sub(1, std::memory_order_relaxed);
    return send_reject(join->nonce, from, proto::RejectReason::busy, 1000, d.size(), now);
  }
  SymbolSource& source = *stream->second;
  const SessionConfig cfg = session_config(*join, source);
  const StreamInfo& info = source.info();
  // The largest CODED packet of the stream must fit: explicit coefficients travel unless we encode.
  const std::size_t coefficients = source.can_send_systematic() ? 0 : info.n;
  if (proto::coded_packet_size(coefficients, info.symbol_size) > cfg.max_datagram)
    return send_reject(join->nonce, from, proto::RejectReason::bad_request, 0, d.size(), now);

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
  body.start_segment = cfg.start_segment;
  body.window = cfg.window;
  body.share = cfg.share;
  body.session_flags = static_cast<std::uint8_t>((cfg.systematic ? proto::join_flags::systematic : 0) |
                                                 (cfg.download ? proto::join_flags::download : 0));
  body.rate = static_cast<std::uint32_t>(std::min(cfg.rate * 8.0, 4.0e9));
  body.max_datagram = cfg.max_datagram;
  body.max_ack_delay_ms = cfg.max_ack_delay_ms;
  body.idle_timeout_ms = cfg.idle_timeout_ms;

  const std::uint64_t id = new_session_id();
  auto accept = proto::server_accept(d, *join, identity_, *suite, id, body);
  if (!accept) {
    config_.open_sessions->fetch_sub(1, std::memory_order_relaxed);
    return metrics_.drops.count(proto::DropReason::malformed);  // a low-order public key
  }
  auto session = std::make_unique<Session>(id, from, join->nonce, source, accept->keys, cfg,
                                           std::move(accept->manifest), static_cast<SessionObserver&>(*this), now);
  socket_.send_now(session->manifest(), from);
  ++metrics_.manifests;
  ++metrics_.sessions_created;
  std::uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = static_cast<std::uint32_t>(slots_.size());
    slots_.emplace_back();
  }
  slots_[slot].session = std::move(session);
  by_id_[id] = slot;
  by_join_[{from, join->nonce}] = slot;
  schedule(slot, now);
}

void Server::on_protected(const proto::Prefix& prefix, std::span<std::uint8_t> d, const net::Address& from,
                          TimePoint now) {
  auto header = proto::parse_header(prefix, d);
  if (!header) return metrics_.drops.count(header.error());
  auto it = by_id_.find(header->session);
  if (it == by_id_.end()) return metrics_.drops.count(proto::DropReason::unknown_session);
  const std::uint32_t slot = it->second;
  Session& s = *slots_[slot].session;
  if (s.peer() != from) return metrics_.drops.count(proto::DropReason::wrong_address);
  const auto in = s.receive(d, *header, now);
  if (in.drop) return metrics_.drops.count(*in.drop);
  if (in.bye) return close(slot, CloseReason::bye, false);
  // The ACK may open a round or change the rate: the session is looked at on the next tick.
  schedule(slot, now);
}

// ---- scheduling ----

TimePoint Server::on_grid(TimePoint at) const {
  const auto tick = config_.pacing_tick;
  const auto since = at - started_;
  if (since <= Clock::duration::zero()) return at;
  const auto ticks = (since + tick - Clock::duration(1)) / tick;
  return started_ + ticks * tick;
}

void Server::schedule(std::uint32_t slot, TimePoint at) {
  if (at == TimePoint::max() || stopping_ || !slots_[slot].session) return;
  at = on_grid(at);
  // A wake-up at or before this one is pending: the session is looked at then, and may sleep on.
  if (slots_[slot].due <= at) return;
  push_wake(slot, at);
  if (at < timer_at_) arm_timer();
}

void Server::push_wake(std::uint32_t slot, TimePoint at) {
  Entry& e = slots_[slot];
  e.generation = ++generations_;
  e.due = at;
  wakes_.push({at, slot, e.generation});
}

void Server::arm_timer() {
  while (!wakes_.empty() && !current(wakes_.top())) wakes_.pop();  // stale
  if (wakes_.empty() || stopping_) {
    timer_at_ = TimePoint::max();
    timer_.cancel();
    return;
  }
  const TimePoint at = wakes_.top().at;
  if (at == timer_at_) return;
  timer_at_ = at;
  timer_.expires_at(at);
  timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec) return;
    timer_at_ = TimePoint::max();
    run_due(Clock::now());
  });
}

void Server::wait_writable() {
  if (writable_wait_) return;
  writable_wait_ = true;
  socket_.asio().async_wait(asio::ip::udp::socket::wait_write, [this](const boost::system::error_code& ec) {
    writable_wait_ = false;
    if (ec || stopping_) return;
    run_due(Clock::now());
  });
}

void Server::run_due(TimePoint now) {
  if (writable_wait_ || stopping_) return;
  if (!socket_.flush()) return wait_writable();
  rate_bucket_.refill(now);
  const std::size_t max_packet = config_.max_datagram;
  std::size_t budget = kPacketsPerRun;
  while (!wakes_.empty() && wakes_.top().at <= now && budget > 0) {
    const Wake w = wakes_.top();
    wakes_.pop();
    if (!current(w)) continue;
    slots_[w.slot].due = TimePoint::max();
    Session& s = *slots_[w.slot].session;
    s.refill(now);
    TimePoint next = TimePoint::max();
    std::size_t turn = 0;
    // A turn sends a whole burst, or it would send the burst's datagrams one wake-up each; near the
    // end of a round, one datagram, and the next one a tick later at the earliest.
    const bool single = s.one_at_a_time();
    const std::size_t first = single ? max_packet : s.burst_bytes();
    for (;; ++turn) {
      if (turn == kPacketsPerTurn || budget == 0) {
        next = now;  // others' turn; this one comes back in the same run if there is budget left
        break;
      }
      if (single && turn == 1) {
        next = std::max(now + 1us, s.pacing_ready(max_packet, now));
        break;
      }
      if (!s.can_send(turn == 0 ? first : max_packet)) {
        next = s.pacing_ready(first, now);
        break;
      }
      if (!rate_bucket_.available(static_cast<double>(max_packet))) {
        next = now + std::chrono::microseconds(
                         static_cast<long>(1e6 * static_cast<double>(max_packet) / rate_bucket_.rate()) + 1);
        break;
      }
      if (socket_.full() && !socket_.flush()) {
        push_wake(w.slot, now);
        return wait_writable();
      }
      const auto before = s.counters();
      const std::size_t len = s.next_packet(socket_.slot(), now);
      if (len == 0) {
        next = s.next_wake(now);
        if (next <= now) next = now + 1ms;
        break;
      }
      const auto& after = s.counters();
      metrics_.coded_packets += after.coded_sent - before.coded_sent;
      metrics_.systematic_packets += after.systematic_sent - before.systematic_sent;
      metrics_.segments_packets += after.segments_sent - before.segments_sent;
      socket_.commit(len, s.peer());
      s.spend(len);
      rate_bucket_.spend(static_cast<double>(len));
      --budget;
    }
    // A turn that sent nothing must not come back at once: that would spin within this run.
    if (turn == 0 && next <= now) next = now + 20us;
    // Later ones go onto the pacing grid; those due now come back within this run.
    if (next != TimePoint::max()) push_wake(w.slot, next > now ? on_grid(next) : next);
  }
  if (!socket_.flush()) return wait_writable();
  if (budget == 0) {
    // More is due than one run may send: let input be read, then carry on.
    asio::post(io_, [this] { run_due(Clock::now()); });
    return;
  }
  arm_timer();
}

void Server::housekeeping(TimePoint now) {
  bool closed = false;
  for (std::uint32_t slot = 0; slot < slots_.size(); ++slot) {
    const Session* s = slots_[slot].session.get();
    if (s && now - s->last_heard() > std::chrono::milliseconds(config_.idle_timeout_ms)) {
      close(slot, CloseReason::idle, true);
      closed = true;
    }
  }
  if (closed) socket_.flush();
  housekeeping_timer_.expires_after(kHousekeeping);
  housekeeping_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec && !stopping_) housekeeping(Clock::now());
  });
}

void Server::close(std::uint32_t slot, CloseReason reason, bool say_bye) {
  Entry& e = slots_[slot];
  if (!e.session) return;
  Session& s = *e.session;
  if (say_bye) {
    if (socket_.full()) socket_.flush();
    if (!socket_.full()) {
      const auto r = reason == CloseReason::idle ? proto::ByeReason::idle_timeout : proto::ByeReason::shutdown;
      if (const std::size_t len = s.bye(socket_.slot(), r)) {
        socket_.commit(len, s.peer());
        ++metrics_.bye_packets;
      }
    }
  }
  ++metrics_.sessions_closed[static_cast<std::size_t>(reason)];
  by_join_.erase({s.peer(), s.nonce()});
  by_id_.erase(s.id());
  e.session.reset();
  e.generation = ++generations_;  // its pending wake-ups are stale, whoever takes the slot next
  e.due = TimePoint::max();
  free_slots_.push_back(slot);
  config_.open_sessions->fetch_sub(1, std::memory_order_relaxed);
}

void Server::shutdown(std::function<void()> done) {
  for (std::uint32_t slot = 0; slot < slots_.size(); ++slot) close(slot, CloseReason::shutdown, true);
  socket_.flush();
  stopping_ = true;
  timer_.cancel();
  housekeeping_timer_.cancel();
  boost::system::error_code ignore;
  socket_.asio().cancel(ignore);
  if (done) asio::post(io_, std::move(done));
}

}  // namespace ncast::server
