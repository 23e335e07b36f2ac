#include "server/server.hpp"

#include <algorithm>
#include <utility>

#include "server/shared_path.hpp"
#include "server/source_limits.hpp"

namespace ncast::server {
namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {

constexpr std::size_t kPacketsPerTurn = 16;   // a session's packets before the next session's turn
constexpr std::size_t kPacketsPerRun = 4096;  // packets per scheduler run before input is read again
constexpr auto kHousekeeping = 100ms;
// How often, and so over how long a window, what paced sessions get through their shared paths is
// measured: half a second is 40 datagrams of a 768 kbit/s stream, and ends the overloading sessions of
// a path within half a second of most of its sessions' breakers finding it short.
constexpr auto kSharedPathWindow = 500ms;
// Input is left to the pacing timer while it is due within this: the longest a datagram waits unread.
constexpr auto kParkHorizon = 2ms;
// A pacing grid this coarse or coarser ticks periodically while wake-ups are near; a finer one is
// per-session timing, one expiry at a time.
constexpr auto kMinTickPeriod = 250us;

}  // namespace

Server::Server(asio::io_context& io, const ServerConfig& config, const proto::Ed25519Identity& identity)
    : io_(io),
      config_(config),
      socket_(io, config.listen, config.socket_buffer, config.max_datagram, config.reuse_port),
      rate_bucket_(config.max_rate, std::max(config.max_rate * 0.002, 64.0 * config.max_datagram)),
      ticker_(io, [this] { run_parked(); }),
      housekeeping_timer_(io),
      started_(Clock::now()),
      admission_(config_, identity, socket_, metrics_, streams_, started_) {
  if (!config_.open_sessions) config_.open_sessions = std::make_shared<std::atomic<std::size_t>>(0);
  if (!config_.sources) config_.sources = std::make_shared<SourceLimits>(config_.max_sessions_per_source);
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

std::map<std::string, StreamTotals> Server::stream_totals() const {
  std::map<std::string, StreamTotals> out;
  for (const auto& [name, source] : streams_) {
    StreamTotals& t = out[name];
    if (const auto closed = closed_totals_.find(source); closed != closed_totals_.end()) t += closed->second;
  }
  for (const Entry& e : slots_) {
    if (!e.session) continue;
    StreamTotals& t = out[e.session->source().info().name];
    ++t.sessions;
    t.sent_packets += e.session->counters().packets_sent;
    t.sent_bytes += e.session->counters().bytes_sent;
  }
  return out;
}

void Server::start() {
  read();
  housekeeping(Clock::now());
}

// ---- input ----

void Server::read() {
  if (reading_ || parked() || stopping_) return;
  reading_ = true;
  socket_.asio().async_wait(asio::ip::udp::socket::wait_read, [this](const boost::system::error_code& ec) {
    reading_ = false;
    // Parking ends the wait: whether to wait again is decided afresh.
    if (ec == asio::error::operation_aborted) return read();
    if (ec || stopping_) return;
    take_input();
    run_due(Clock::now());
    read();
  });
}

void Server::take_input() {
  socket_.receive([this](std::span<std::uint8_t> d, const net::Address& from, TimePoint arrived) {
    on_datagram(d, from, arrived);
  });
}

void Server::park(bool on) {
  // A wait for writability needs the reactor's watch.
  if (on == parked() || (on && writable_wait_) || stopping_) return;
  socket_.watch(!on);
  read();
}

void Server::on_datagram(std::span<std::uint8_t> d, const net::Address& from, TimePoint now) {
  ++metrics_.rx_packets;
  metrics_.rx_bytes += d.size();
  auto prefix = proto::parse_prefix(d);
  if (!prefix) return metrics_.drops.count(prefix.error());
  switch (prefix->type) {
    case proto::PacketType::hello: return admission_.on_hello(*prefix, d, from, now);
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

void Server::on_join(const proto::Prefix& prefix, std::span<std::uint8_t> d, const net::Address& from, TimePoint now) {
  if (auto session = admission_.on_join(prefix, d, from, now, *this)) add_session(std::move(session), now);
}

Session* Server::joined(const net::Address& from, const proto::Nonce& nonce) {
  const auto it = by_join_.find({from, nonce});
  return it == by_join_.end() ? nullptr : slots_[it->second].session.get();
}

void Server::add_session(std::unique_ptr<Session> session, TimePoint now) {
  std::uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = static_cast<std::uint32_t>(slots_.size());
    slots_.emplace_back();
  }
  by_id_[session->id()] = slot;
  by_join_[{session->peer(), session->nonce()}] = slot;
  Entry& e = slots_[slot];
  e.session = std::move(session);
  e.added = now;
  e.path_sampled = {};
  schedule(slot, now);
}

void Server::on_protected(const proto::Prefix& prefix, std::span<std::uint8_t> d, const net::Address& from,
                          TimePoint now) {
  auto header = proto::parse_header(prefix, d);
  if (!header) return metrics_.drops.count(header.error());
  auto it = by_id_.find(header->session);
  if (it == by_id_.end()) {
    if (const auto bye = closing_.answer(header->session, from, now); !bye.empty()) send_again(bye, from);
    return metrics_.drops.count(proto::DropReason::unknown_session);
  }
  const std::uint32_t slot = it->second;
  Session& s = *slots_[slot].session;
  const bool elsewhere = s.peer() != from;
  const std::uint64_t events = s.counters().congestion_events, entries = s.counters().window_entries;
  const auto in = s.receive(d, *header, now);
  metrics_.congestion_events += s.counters().congestion_events - events;
  metrics_.window_entries += s.counters().window_entries - entries;
  // From another address only an authentic packet counts (the peer's address changed); anything else
  // from there is misdirected, or a spoofer's.
  if (in.drop) return metrics_.drops.count(elsewhere ? proto::DropReason::wrong_address : *in.drop);
  if (in.bye) return close(slot, CloseReason::bye, false);
  if (const auto to = s.take_validated_path()) migrate(slot, *to, now);
  if (s.peer() != from) probe_path(s, from, d.size(), now);
  // The ACK may open a round or change the rate: the session is looked at on the next tick.
  schedule(slot, now);
}

void Server::send_again(std::span<const std::uint8_t> datagram, const net::Address& to) {
  if (socket_.full() && !socket_.flush()) return;
  std::copy(datagram.begin(), datagram.end(), socket_.slot().begin());
  socket_.commit(datagram.size(), to);
  ++metrics_.bye_packets;
}

void Server::probe_path(Session& s, const net::Address& to, std::size_t received, TimePoint now) {
  if (socket_.full() && !socket_.flush()) return;
  if (const std::size_t len = s.probe_path(socket_.slot(), to, received, now)) {
    socket_.commit(len, to);
    ++metrics_.path_probes;
  }
}

void Server::migrate(std::uint32_t slot, const net::Address& to, TimePoint now) {
  Session& s = *slots_[slot].session;
  // The session counts under its new address; where that holds its limit already, it stays put.
  if (!config_.sources->move(s.peer(), to)) return;
  // The JOIN from the old address is spent: replayed, it opens nothing.
  by_join_.erase({s.peer(), s.nonce()});
  admission_.retire({s.peer(), s.nonce()}, now);
  s.move_to(to);
  by_join_[{to, s.nonce()}] = slot;
  ++metrics_.migrations;
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
  // While the ticker ticks, every grid point fires already.
  if (!ticker_.ticking() && at < ticker_.at()) arm_timer();
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
    ticker_.cancel();
    park(false);
    return;
  }
  const TimePoint at = wakes_.top().at;
  // While the timer is this near, input waits for it: the datagrams that come in meanwhile (mostly ACKs)
  // are read in one go then, not each batch on a wake-up of its own, and their stamps keep the RTTs exact.
  const bool near = at - Clock::now() <= kParkHorizon;
  park(near);
  // Near, and on a grid of a useful period, the ticker fires on every grid point: nothing to set per
  // wake-up, and nothing for schedule() to move earlier.
  const bool tick = near && config_.pacing_tick >= kMinTickPeriod;
  ticker_.set(at, tick ? std::chrono::nanoseconds(config_.pacing_tick) : std::chrono::nanoseconds::zero());
}

void Server::run_parked() {
  if (parked()) take_input();
  run_due(Clock::now());
}

void Server::wait_writable() {
  if (writable_wait_) return;
  park(false);
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
  std::size_t budget = kPacketsPerRun;
  while (!wakes_.empty() && wakes_.top().at <= now && budget > 0) {
    const Wake w = wakes_.top();
    wakes_.pop();
    if (!current(w)) continue;
    slots_[w.slot].due = TimePoint::max();
    const TurnEnd end = take_turn(w.slot, budget, now);
    if (end.blocked) {
      push_wake(w.slot, now);
      return wait_writable();
    }
    // Later ones go onto the pacing grid; those due now come back within this run.
    if (end.next != TimePoint::max()) push_wake(w.slot, end.next > now ? on_grid(end.next) : end.next);
  }
  if (!socket_.flush()) return wait_writable();
  if (budget == 0) {
    // More is due than one run may send: let input be read, then carry on.
    asio::post(io_, [this] { run_parked(); });
    return;
  }
  arm_timer();
}

Server::TurnEnd Server::take_turn(std::uint32_t slot, std::size_t& budget, TimePoint now) {
  Session& s = *slots_[slot].session;
  s.refill(now);
  // A turn sends a whole burst, or it would send the burst's datagrams one wake-up each; near the
  // end of a round, only what the peer surely still needs, and the rest a tick later at the earliest.
  const std::size_t in_a_row = s.in_a_row();
  const std::size_t first = std::min(s.burst_bytes(), std::min(in_a_row, kPacketsPerTurn) * config_.max_datagram);
  std::size_t sent = 0;
  TimePoint next;
  for (;; ++sent) {
    if (const auto limit = turn_limit(s, in_a_row, first, sent, budget, now)) {
      next = *limit;
      break;
    }
    if (socket_.full() && !socket_.flush()) return {now, true};
    if (send_next(s, now) == 0) {
      next = s.next_wake(now);
      if (next <= now) next = now + 1ms;
      break;
    }
    --budget;
  }
  // A turn that sent nothing must not come back at once: that would spin within this run.
  if (sent == 0 && next <= now) next = now + 20us;
  return {next, false};
}

std::optional<TimePoint> Server::turn_limit(const Session& s, std::size_t in_a_row, std::size_t first, std::size_t sent,
                                            std::size_t budget, TimePoint now) const {
  const std::size_t max_packet = config_.max_datagram;
  // Others' turn; this one comes back in the same run if there is budget left.
  if (sent == kPacketsPerTurn || budget == 0) return now;
  if (sent == in_a_row) return std::max(now + 1us, s.pacing_ready(max_packet, now));
  if (!s.can_send(sent == 0 ? first : max_packet)) return s.pacing_ready(first, now);
  if (!rate_bucket_.available(static_cast<double>(max_packet)))
    return now + std::chrono::microseconds(
                     static_cast<long>(1e6 * static_cast<double>(max_packet) / rate_bucket_.rate()) + 1);
  return std::nullopt;
}

std::size_t Server::send_next(Session& s, TimePoint now) {
  const auto before = s.counters();
  const std::span<std::uint8_t> slot = socket_.slot();
  Session::Outgoing packet = s.next_outgoing(slot, now);
  const std::size_t len = packet.len;
  if (len == 0) return 0;
  const auto& after = s.counters();
  metrics_.coded_packets += after.coded_sent - before.coded_sent;
  metrics_.systematic_packets += after.systematic_sent - before.systematic_sent;
  metrics_.segments_packets += after.segments_sent - before.segments_sent;
  if (packet.shared) {
    // The shared part goes out in place, between this session's header and authenticator.
    const auto& [header, tail] = packet.envelope;
    std::copy(header.begin(), header.end(), slot.begin());
    std::copy(tail.begin(), tail.end(), slot.begin() + header.size());
    const std::span<const std::uint8_t> middle = packet.shared->bytes;
    socket_.commit(header.size(), {middle, std::move(packet.shared)}, tail.size(), s.peer());
  } else {
    socket_.commit(len, s.peer());
  }
  s.spend(len);
  rate_bucket_.spend(static_cast<double>(len));
  return len;
}

void Server::shed_shared_paths(TimePoint now) {
  std::unordered_map<net::Address, std::vector<PathMember>, net::AddressHash> paths;
  for (std::uint32_t slot = 0; slot < slots_.size(); ++slot) {
    Entry& e = slots_[slot];
    if (!e.session || !e.session->paced()) continue;
    const Session& s = *e.session;
    const CircuitBreaker::Totals totals = s.path_totals();
    // As the breaker measures it, over the window since the last look.
    const double carried =
        e.path_sampled == TimePoint{}
            ? 0.0
            : CircuitBreaker::between(e.path_sample, totals,
                                      std::chrono::duration<double>(now - e.path_sampled).count(), s.rate())
                  .carried;
    e.path_sample = totals;
    e.path_sampled = now;
    net::Address host = s.peer();
    host.port = 0;
    paths[host].push_back({slot, e.added, s.breaker().judged(), s.breaker().congested(), carried, s.breaker().needed(),
                           s.played_ahead(now)});
  }
  for (auto& [host, members] : paths) {
    const std::vector<std::uint32_t> beyond = beyond_shared_path(members);
    if (beyond.empty()) continue;
    double carried = 0;
    for (const PathMember& m : members) carried += m.carried;
    const double each = carried / static_cast<double>(members.size());
    for (const PathMember& m : members) slots_[m.slot].session->kept_on_shared_path();
    for (const std::uint32_t slot : beyond) slots_[slot].session->end_on_shared_path(each);
  }
}

void Server::housekeeping(TimePoint now) {
  bool closed = false;
  const bool sample = now - sampled_at_ >= 1s;
  if (sample) sampled_at_ = now;
  closing_.expire(now);
  if (now - shared_paths_at_ >= kSharedPathWindow) {
    shared_paths_at_ = now;
    shed_shared_paths(now);
  }
  for (std::uint32_t slot = 0; slot < slots_.size(); ++slot) {
    const Session* s = slots_[slot].session.get();
    if (!s) continue;
    if (sample && s->controller().has_rtt()) {
      metrics_.session_rate.observe(kRateBuckets, 8 * s->controller().delivery_rate());
      metrics_.session_rtt.observe(kRttBuckets, std::chrono::duration<double>(s->controller().srtt()).count());
    }
    if (s->path_too_slow()) {
      ++metrics_.breaker_trips;
      close(slot, CloseReason::path_too_slow, true);
      closed = true;
    } else if (!s->confirmed() && now - s->last_heard() > std::chrono::milliseconds(config_.handshake_timeout_ms)) {
      // No BYE: nothing says the address receives.
      close(slot, CloseReason::handshake, false);
    } else if (now - s->last_heard() > std::chrono::milliseconds(config_.idle_timeout_ms)) {
      close(slot, CloseReason::idle, s->confirmed());
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
  // A path too slow is a lossy one, and a peer that misses this BYE would only join again: it goes
  // out three times (each its own packet number; the first to arrive ends the session).
  const int byes = !say_bye ? 0 : reason == CloseReason::path_too_slow ? 3 : 1;
  const auto why = reason == CloseReason::idle            ? proto::ByeReason::idle_timeout
                   : reason == CloseReason::path_too_slow ? proto::ByeReason::path_too_slow
                                                          : proto::ByeReason::shutdown;
  for (int i = 0; i < byes; ++i) {
    if (socket_.full()) socket_.flush();
    if (socket_.full()) break;
    if (const std::size_t len = s.bye(socket_.slot(), why)) {
      socket_.commit(len, s.peer());
      ++metrics_.bye_packets;
    }
  }
  if (byes > 0) {
    // One more, kept to answer the peer with should all of these be lost.
    std::vector<std::uint8_t> again(config_.max_datagram);
    again.resize(s.bye(again, why));
    if (!again.empty()) closing_.add(s.id(), s.peer(), again, Clock::now());
  }
  ++metrics_.sessions_closed[static_cast<std::size_t>(reason)];
  metrics_.silences += s.counters().silences;
  StreamTotals& sent = closed_totals_[&s.source()];
  sent.sent_packets += s.counters().packets_sent;
  sent.sent_bytes += s.counters().bytes_sent;
  by_join_.erase({s.peer(), s.nonce()});
  admission_.retire({s.peer(), s.nonce()}, Clock::now());
  config_.sources->remove(s.peer());
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
  ticker_.cancel();
  housekeeping_timer_.cancel();
  boost::system::error_code ignore;
  socket_.asio().cancel(ignore);
  if (done) asio::post(io_, std::move(done));
}

}  // namespace ncast::server
