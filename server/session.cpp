#include "server/session.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ncast::server {
namespace {

using std::chrono::microseconds;

constexpr microseconds kMinRto{40'000};  // loopback RTTs are tiny, but a busy peer answers late
// RFC 9002's loss detection: a packet is lost once this many later ones were acknowledged (at first;
// reordering raises it), or 9/8 of the RTT after it was sent (session_loss.cpp).
constexpr std::uint64_t kPacketThreshold = 3;
// A download session starts at this rate (or its cap) and finds the path's from there.
constexpr double kInitialRate = 20e6 / 8;
constexpr double kMinRate = 16e3;  // octets per second: the rate of probes into a silent path

RateControllerConfig controller_config(const SessionConfig& c) {
  RateControllerConfig r;
  r.initial_rate = std::min(c.rate, kInitialRate);
  r.min_rate = std::min(c.rate, kMinRate);
  r.max_rate = c.rate;
  r.datagram = c.max_datagram;
  return r;
}

CircuitBreakerConfig breaker_config(const SessionConfig& c, std::uint64_t id) {
  CircuitBreakerConfig b;
  b.media_rate = c.download ? 0 : c.media_rate;
  b.seed = id;
  return b;
}

// Descriptors a SEGMENTS packet of at most `bytes` octets can carry.
std::size_t descriptors_within(std::size_t bytes) {
  constexpr std::size_t overhead = proto::kHeaderSize + proto::kTagSize + proto::kSegmentsHeaderSize + proto::kSealSize;
  return bytes < overhead + proto::kDescriptorSize ? 0 : proto::descriptors_per_packet(bytes);
}

}  // namespace

Session::Session(std::uint64_t id, const net::Address& peer, const proto::Nonce& nonce, SymbolSource& source,
                 const proto::SessionKeys& keys, const SessionConfig& config, std::vector<std::uint8_t> manifest,
                 SessionObserver& observer, TimePoint now)
    : id_(id),
      peer_(peer),
      nonce_(nonce),
      source_(source),
      config_(config),
      manifest_(std::move(manifest)),
      observer_(observer),
      seal_(keys.suite, keys.server_key, keys.server_iv, proto::Aead::Direction::seal),
      open_(keys.suite, keys.peer_key, keys.peer_iv, proto::Aead::Direction::open),
      coded_mac_(keys.coded_mac),
      peer_next_needed_(config.start_segment),
      reorder_packets_(kPacketThreshold),
      unconfirmed_sent_(manifest_.size()),
      manifest_sent_at_(now),
      cc_(controller_config(config), now),
      breaker_(breaker_config(config, id), now),
      pacing_(rate(), bucket_size(), std::max(2.0 * config_.max_datagram, static_cast<double>(burst_bytes())), now),
      last_heard_(now) {}

// ---- input ----

Session::Inbound Session::receive(std::span<std::uint8_t> datagram, const proto::Header& header, TimePoint now) {
  Inbound in;
  if (datagram.size() > config_.max_datagram) {
    in.drop = proto::DropReason::oversized;
    return in;
  }
  if (header.type != proto::PacketType::ack && header.type != proto::PacketType::bye) {
    in.drop = proto::DropReason::unexpected;
    return in;
  }
  if (!replay_.check(header.number)) {
    in.drop = proto::DropReason::replay;
    return in;
  }
  auto body = proto::open_packet(datagram, header, open_);
  if (!body) {
    in.drop = proto::DropReason::auth;
    return in;
  }
  // Authentic: the number is spent even if the body turns out malformed.
  replay_.accept(header.number);
  last_heard_ = now;
  confirmed_ = true;
  if (header.type == proto::PacketType::bye) {
    auto bye = proto::decode_bye_body(*body);
    if (!bye) {
      in.drop = bye.error();
      return in;
    }
    in.bye = bye->reason;
    return in;
  }
  auto ack = proto::decode_ack_body(*body);
  if (!ack) {
    in.drop = ack.error();
    return in;
  }
  // Reordered on the way: an ACK older than one already taken says nothing new.
  if (header.number < newest_ack_) return in;
  newest_ack_ = header.number;
  on_ack(*ack, now);
  return in;
}

void Session::on_ack(const proto::AckBody& ack, TimePoint now) {
  ++counters_.acks;
  const bool was_silent = cc_.silent();
  // Packets up to the reordering threshold below the largest may still arrive (the controller counts loss
  // only below them); an ACK without a history tells nothing of single packets.
  const std::uint64_t span = ack.history.empty() ? 0 : std::min(reorder_packets_, 1 + 64 * ack.history.size());
  cc_.on_ack(ack.largest, ack.received, microseconds(ack.ack_delay_us), now,
             {span, proto::acknowledged_of_last(ack, span)});
  counters_.congestion_events = cc_.congestion_events();
  if (config_.download) counters_.window_entries = cc_.window_entries();  // a paced session's is unused
  largest_acked_ = std::max(largest_acked_, ack.largest);
  detect_spurious_losses(ack, now);

  // An ACK for the probe proves the peer receives at the probed address. Without a history it must
  // be the largest: the probe alone went there.
  if (probe_ && probe_->number != 0 &&
      (ack.history.empty() ? ack.largest == probe_->number : proto::acknowledges(ack, probe_->number))) {
    validated_ = probe_->to;
    probe_.reset();
  }

  if (ack.known > peer_known_) {
    // Descriptors arrive: resends go back to the RTO, which runs again for those still unacknowledged.
    desc_backoff_ = 0;
    desc_sent_at_ = now;
  }
  peer_known_ = std::max(peer_known_, ack.known);
  // A peer never goes back; an old ACK overtaken by a newer one says nothing new.
  count_decoded(ack.next_needed, now);
  peer_next_needed_ = std::max(peer_next_needed_, ack.next_needed);
  peer_complete_ = (ack.flags & proto::ack_flags::complete) != 0;
  peer_final_seen_ = peer_final_seen_ || (ack.flags & proto::ack_flags::final_seen) != 0;
  peer_entries_ = ack.entries;

  std::size_t e = 0;
  for (Flight& f : flights_) {
    while (e < ack.entries.size() && ack.entries[e].segment < f.segment) ++e;
    const bool listed = e < ack.entries.size() && ack.entries[e].segment == f.segment;
    // Below next_needed means decoded and written: the peer lists only what is above.
    const bool below = f.segment < ack.next_needed;
    const std::uint32_t rank = below ? f.n_s : listed ? ack.entries[e].rank : 0;
    const bool decoded = below || (listed && ack.entries[e].decoded);
    f.rank = std::min(rank, f.n_s);
    if (decoded && !f.decoded) {
      f.decoded = true;
      observer_.segment_completed(f.sent, f.n_s);
      continue;
    }
    settle(f, &ack, now);
    // At full rank (a batched decoder still solving it, or a relay's peer holding all it has) the rest
    // of the round would arrive for nothing: the session waits for the decoded news instead.
    if (!f.waiting && deficit(f) == 0) {
      f.round_last = f.in_flight.empty() ? 0 : f.in_flight.back().number;
      f.rtt_sampled = true;  // the round's last packet was never sent: nothing to time
      end_round(f, now);
    }
    if (!f.waiting) continue;
    if (!f.rtt_sampled && ack.largest >= f.round_last) {
      f.rtt_sampled = true;
      sample_rtt(std::chrono::duration_cast<microseconds>(now - f.round_sent) - microseconds(ack.ack_delay_us));
    }
    // The round is over when everything of it that will arrive has arrived: each of its packets was
    // acknowledged or is lost by the reordering thresholds, not merely overtaken by its last one.
    if (ack.largest >= f.round_last && f.in_flight.empty()) end_round(f, now);
  }
  update_loss_estimate(ack);
  if (was_silent) resume(now);
  // Flights the peer no longer needs leave the window.
  while (!flights_.empty() && (flights_.front().segment < peer_next_needed_ || flights_.front().decoded))
    flights_.pop_front();
}

void Session::resume(TimePoint now) {
  // The first ACK after a silence (a blackhole that ended): rounds that waited out their backed-off
  // timeouts, up to 2 s each, probe now, so that the session is back at its rate within a round trip
  // and not after the next timeout (the path may be up for as little as that).
  for (Flight& f : flights_) {
    if (!f.waiting || f.decoded) continue;
    f.backoff = 0;
    f.rto_at = std::min(f.rto_at, now);
  }
  desc_backoff_ = 0;
}

void Session::end_round(Flight& f, TimePoint now) {
  f.waiting = false;
  f.backoff = 0;
  f.starved_at.reset();
  f.loss_at = TimePoint::max();
  const std::uint32_t d = deficit(f);
  if (d > 0) {
    f.target = f.sent + round_size(d);
    ++counters_.rounds;
  } else {
    // Full rank but not yet verified (or a relay with nothing more): wait for news.
    f.waiting = true;
    f.rto_at = now + rto(f.backoff);
    f.starved_at = source_.rank(f.segment);
  }
}

// ---- output ----

std::chrono::microseconds Session::rto(int backoff) const {
  microseconds base =
      have_rtt_ ? srtt_ + 4 * rttvar_ + std::chrono::milliseconds(config_.max_ack_delay_ms) : kInitialRto;
  base = std::clamp(base, kMinRto, kMaxRto);
  return std::min(kMaxRto, base * (1 << std::min(backoff, 8)));
}

std::uint32_t Session::deficit(const Flight& f) const {
  // A relay can give no more than it holds.
  const std::size_t available = std::min<std::size_t>(f.n_s, source_.rank(f.segment));
  return available > f.rank ? static_cast<std::uint32_t>(available - f.rank) : 0;
}

std::uint32_t Session::round_size(std::uint32_t deficit) const {
  const double share = config_.share / static_cast<double>(proto::kFullShare);
  const double want = deficit * share / (1.0 - std::min(loss_, kMaxLoss));
  return std::max<std::uint32_t>(1, static_cast<std::uint32_t>(std::ceil(want - 1e-9)));
}

void Session::refresh_window() {
  // Segments a live window dropped are not sent.
  const std::uint32_t base = std::max({peer_next_needed_, config_.start_segment, source_.first_segment()});
  while (!flights_.empty() && flights_.front().segment < base) flights_.pop_front();
  const std::uint64_t end =
      std::min<std::uint64_t>({std::uint64_t{base} + config_.window, peer_known_, source_.segment_count()});
  std::uint32_t next = flights_.empty() ? base : flights_.back().segment + 1;
  for (; next < end; ++next) {
    Flight f;
    f.segment = next;
    f.n_s = static_cast<std::uint32_t>(source_.symbols_of(next));
    for (const auto& e : peer_entries_)
      if (e.segment == next) {
        f.rank = std::min<std::uint32_t>(e.rank, f.n_s);
        f.decoded = e.decoded;
      }
    if (f.decoded) continue;
    // Systematic symbols only help a peer that has nothing of the segment yet.
    f.systematic = config_.systematic && source_.can_send_systematic() && f.rank == 0;
    const std::uint32_t d = deficit(f);
    const double first = d * (1.0 + config_.redundancy);
    f.target = d > 0 ? round_size(static_cast<std::uint32_t>(std::ceil(first - 1e-9))) : 0;
    flights_.push_back(f);
  }
}

Session::Flight* Session::pick(TimePoint now) {
  for (Flight& f : flights_) {
    if (f.decoded) continue;
    if (f.waiting && f.starved_at && source_.rank(f.segment) > *f.starved_at && deficit(f) > 0) {
      // The source (a relay) has more than when it ran dry: resume now.
      f.waiting = false;
      f.backoff = 0;
      f.starved_at.reset();
      f.target = f.sent + round_size(deficit(f));
    }
    if (f.waiting && now >= f.loss_at) {
      // The last of the round's packets below the largest acknowledged are lost by time.
      settle(f, nullptr, now);
      if (f.in_flight.empty() && largest_acked_ >= f.round_last) end_round(f, now);
    }
    if (f.waiting) {
      if (now < f.rto_at) continue;
      f.starved_at.reset();
      // No ACK covered the round in time: its end was lost, or the ACK, or the peer is slow. One probe
      // symbol (a tail-loss probe) draws a fresh ACK, whose rank sizes the next round exactly.
      ++counters_.timeouts;
      f.waiting = false;
      ++f.backoff;
      const std::uint32_t d = deficit(f);
      f.target = f.sent + (d > 0 ? 1 : 0);
      if (d == 0) {
        f.waiting = true;
        f.rto_at = now + rto(f.backoff);
        f.starved_at = source_.rank(f.segment);
        continue;
      }
    }
    if (f.sent < f.target) return &f;
    if (f.target == 0) {
      // Nothing to send yet (a relay still waiting for its own rank to grow): look again soon.
      const std::uint32_t d = deficit(f);
      if (d > 0) {
        f.target = f.sent + round_size(d);
        return &f;
      }
    }
  }
  return nullptr;
}

std::size_t Session::seal(std::span<std::uint8_t> out, proto::PacketType type, const auto& write_body) {
  const proto::Header h{type, id_, next_number_};
  const std::size_t len =
      proto::seal_packet(out.first(std::min<std::size_t>(out.size(), config_.max_datagram)), h, seal_, write_body);
  if (len > 0) count_sent(len);
  return len;
}

void Session::count_sent(std::size_t len) {
  ++next_number_;
  if (!confirmed_) unconfirmed_sent_ += len;
  ++counters_.packets_sent;
  counters_.bytes_sent += len;
}

std::size_t Session::segments_packet(std::span<std::uint8_t> out, TimePoint now) {
  const std::uint32_t count = source_.segment_count();
  const bool final = source_.final();
  const std::uint8_t live = source_.info().live ? proto::stream_flags::live : 0;
  // Descriptors up to a little beyond the window; further ones follow as the peer advances.
  const std::size_t room = std::min<std::size_t>(config_.max_datagram, unconfirmed_budget());
  const std::size_t per_packet = proto::descriptors_per_packet(config_.max_datagram);
  // A batch any datagram can carry, so that a relay can forward it whole with the origin's seal.
  const std::size_t fit = std::min(descriptors_within(room), proto::descriptors_per_packet(proto::kMinDatagram));
  const std::uint64_t want = std::min<std::uint64_t>(
      count, std::uint64_t{std::max(peer_next_needed_, config_.start_segment)} + config_.window + per_packet);
  proto::SegmentsBody body;
  body.segment_count = count;
  // Descriptors not acknowledged within a retransmission timeout were lost: send them again.
  if (peer_known_ < desc_sent_ && now - desc_sent_at_ > rto(desc_backoff_) && fit > 0) {
    desc_sent_ = peer_known_;
    ++desc_backoff_;
  }
  TableSeals& seals = *config_.seals;
  const std::uint32_t end =
      desc_sent_ < want && fit > 0
          ? seals.sealed_end(desc_sent_, static_cast<std::uint32_t>(std::min<std::uint64_t>(want, desc_sent_ + fit)))
          : desc_sent_;
  const bool more = end > desc_sent_;
  // The stream ended after its last descriptor went out: say so until the peer has seen it.
  const bool say_final = !more && final && desc_sent_ == count && !peer_final_seen_ && confirmed_ &&
                         (!final_sent_ || now - final_sent_at_ > rto(desc_backoff_));
  if (!more && !say_final) return 0;
  // The final flag (and the final seal) only on the batch that ends the table.
  const bool ends = final && (say_final || end == count);
  const auto table_seal = seals.seal(more ? end : count, ends);
  if (!table_seal) return 0;
  body.first = more ? desc_sent_ : count;
  body.stream_flags = static_cast<std::uint8_t>(live | (ends ? proto::stream_flags::final : 0));
  body.seal = *table_seal;
  if (more) {
    // The timeout runs from the oldest batch not acknowledged: the peer takes a batch only where its
    // table ends, so the ones behind a lost one are dropped too, and a timer that each new batch restarted
    // (one per segment at full rate) fired only once the window had run dry, every 40 segments or so at
    // 10 % loss (docs/protocol.md section 2.11).
    if (peer_known_ >= desc_sent_) desc_sent_at_ = now;
    for (std::uint32_t i = desc_sent_; i < end; ++i) body.descriptors.push_back(source_.descriptor(i));
    desc_sent_ = end;
  } else if (final_sent_) {
    ++desc_backoff_;
  }
  final_sent_at_ = now;
  final_sent_ = ends;
  ++counters_.segments_sent;
  return seal(out.first(std::min(out.size(), room)), proto::PacketType::segments,
              [&](proto::Writer& w) { proto::write_body(w, body); });
}

std::size_t Session::probe_path(std::span<std::uint8_t> out, const net::Address& from, std::size_t received,
                                TimePoint now) {
  if (!probe_ || probe_->to != from) probe_ = PathProbe{from};
  probe_->received += received;
  if (probe_->number != 0 && now - probe_->at < rto(0)) return 0;
  constexpr std::size_t size = proto::kHeaderSize + proto::kSegmentsHeaderSize + proto::kTagSize;
  if (probe_->sent + size > 3 * probe_->received) return 0;  // anti-amplification toward an unvalidated address
  proto::SegmentsBody body;
  body.segment_count = source_.segment_count();
  // No descriptors and no final flag: it claims nothing, so it needs no seal of the origin's.
  body.first = body.segment_count;
  body.stream_flags = source_.info().live ? proto::stream_flags::live : 0;
  const std::size_t len = seal(out, proto::PacketType::segments, [&](proto::Writer& w) { proto::write_body(w, body); });
  if (len == 0) return 0;
  probe_->number = next_number_ - 1;
  probe_->sent += len;
  probe_->at = now;
  return len;
}

std::size_t Session::unconfirmed_budget() const {
  if (confirmed_) return std::numeric_limits<std::size_t>::max();
  return 3 * received_ > unconfirmed_sent_ ? 3 * received_ - unconfirmed_sent_ : 0;
}

bool Session::resend_manifest(TimePoint now) {
  if (confirmed_ || now - manifest_sent_at_ < rto(0) || manifest_.size() > unconfirmed_budget()) return false;
  unconfirmed_sent_ += manifest_.size();
  manifest_sent_at_ = now;
  return true;
}

Session::Outgoing Session::coded_packet(std::size_t room, Flight& f, TimePoint now) {
  const bool systematic = f.systematic && f.next_systematic < f.n_s;
  SharedSymbols& shared = *config_.shared;
  // The symbol sealed once for every session; this session adds its header and authenticator.
  Outgoing out;
  out.shared = systematic ? shared.systematic(f.segment, f.next_systematic) : shared.coded(f.segment, f.next_coded);
  if (out.shared) out.len = proto::kHeaderSize + out.shared->bytes.size() + proto::kAuthenticatorSize;
  if (!out.shared || out.len > std::min<std::size_t>(room, config_.max_datagram)) {
    // The source cannot make this symbol (a relay holding nothing yet): wait for it to grow.
    f.waiting = true;
    f.round_last = next_number_;
    f.rtt_sampled = true;  // nothing of it went out to time
    f.rto_at = now + rto(f.backoff);
    f.starved_at = source_.rank(f.segment);
    return {};
  }
  out.envelope = proto::coded_envelope(coded_mac_, id_, next_number_, out.shared->digest);
  count_sent(out.len);
  if (systematic) {
    ++f.next_systematic;
    ++counters_.systematic_sent;
  } else {
    ++f.next_coded;
  }
  ++counters_.coded_sent;
  ++f.sent;
  f.in_flight.push_back({next_number_ - 1, now});
  if (f.sent >= f.target) {
    f.waiting = true;
    f.rtt_sampled = false;
    f.round_last = next_number_ - 1;
    f.round_sent = now;
    f.rto_at = now + rto(f.backoff);
  }
  return out;
}

bool Session::behind_window() const { return confirmed_ && peer_next_needed_ < source_.first_segment(); }

Session::Outgoing Session::next_outgoing(std::span<std::uint8_t> out, TimePoint now) {
  Outgoing packet = produce(out, now);
  if (packet.len > 0) cc_.on_sent(next_number_ - 1, packet.len, now);
  return packet;
}

std::size_t Session::next_packet(std::span<std::uint8_t> out, TimePoint now) {
  const Outgoing packet = next_outgoing(out, now);
  if (!packet.shared) return packet.len;
  return proto::write_coded_packet(out, packet.envelope, packet.shared->bytes);
}

Session::Outgoing Session::produce(std::span<std::uint8_t> out, TimePoint now) {
  // The peer waits for a segment the live window dropped: silence makes it rejoin, and the rejoin's
  // MANIFEST moves it to the window's start (docs/protocol.md section 9).
  if (behind_window()) return {};
  Outgoing whole;
  if ((whole.len = segments_packet(out, now)) > 0) return whole;
  // Coded symbols wait for the key confirmation of the first ACK (docs/protocol.md section 3).
  if (!confirmed_ || peer_complete_) return {};
  refresh_window();
  for (int attempts = 0; attempts < 4; ++attempts) {
    Flight* f = pick(now);
    if (!f) return {};
    if (Outgoing packet = coded_packet(out.size(), *f, now); packet.len > 0) return packet;
  }
  return {};
}

std::size_t Session::bye(std::span<std::uint8_t> out, proto::ByeReason reason) {
  proto::ByeBody body{reason};
  if (reason == proto::ByeReason::path_too_slow && breaker_.needed() > 0) {
    // In the stream's terms: the share of its bitrate that this session carries, and what arrived of it.
    const double needed_kbps =
        static_cast<double>(source_.info().bitrate) / 1000.0 * config_.share / static_cast<double>(proto::kFullShare);
    body.needed_kbps = static_cast<std::uint32_t>(std::lround(needed_kbps));
    body.measured_kbps = static_cast<std::uint32_t>(std::lround(needed_kbps * breaker_.measured() / breaker_.needed()));
  }
  return seal(out, proto::PacketType::bye, [&](proto::Writer& w) { proto::write_body(w, body); });
}

TimePoint Session::next_wake(TimePoint now) const {
  TimePoint wake = TimePoint::max();
  if (behind_window()) return wake;
  // Spent its budget before the first ACK: only the ACK (input) can wake it.
  if (!confirmed_ && descriptors_within(unconfirmed_budget()) == 0) return wake;
  if (peer_known_ < desc_sent_) wake = desc_sent_at_ + rto(desc_backoff_);
  if (!confirmed_ || peer_complete_) return wake;
  if (source_.final() && !peer_final_seen_ && final_sent_) wake = std::min(wake, final_sent_at_ + rto(desc_backoff_));
  for (const Flight& f : flights_) {
    if (f.decoded) continue;
    if (f.waiting && f.starved_at && source_.rank(f.segment) > *f.starved_at && deficit(f) > 0) return now;
    if (f.waiting) wake = std::min({wake, f.rto_at, f.loss_at});
    else if (f.sent < f.target || deficit(f) > 0) return now;
    // Otherwise nothing until the source has more (a relay): the server wakes us when it does.
  }
  // New flights may become possible too (descriptors or segments appeared): likewise.
  return wake;
}

}  // namespace ncast::server
