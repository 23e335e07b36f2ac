#include "peer/server_link.hpp"

#include <openssl/crypto.h>

#include <algorithm>

#include "protocol/segment_seal.hpp"

namespace ncast::peer {
namespace {

using namespace std::chrono_literals;
constexpr std::uint32_t kAckEvery = 16;  // CODED packets between ACKs at most
// Packets below the largest that an ACK tells about (1023, the replay window): the server tells reordered packets from
// lost ones by them, and at least every 16th packet an ACK goes out, so each is told of many times.
constexpr std::size_t kAckHistoryWords = 16;
constexpr auto kMaxBackoff = 1000ms;
// A HELLO waits this long for its RETRY before it is sent again: no RTT is known yet, and this is the
// one Chromium's QUIC assumes before its first sample. 250 ms, as before, cost each download a quarter
// of a second in the one start of five whose HELLO or RETRY was lost at 10 % loss each way (the bed's
// randomloss). A path longer than this gets a HELLO too many, and a RETRY answering it is dropped.
constexpr auto kHelloWait = 100ms;
// The RETRY that answers our only HELLO measures the RTT: the JOIN waits three of them (RFC 9002's
// first PTO), at least the 50 ms within which a server resends its MANIFEST to a repeated JOIN only once
// (docs/protocol.md section 9), and a margin for the two JOINs' paths and handling to differ. With
// 100 ms, two lost JOINs or MANIFESTs cost 0.3 s: one randomloss start in 25, and a failed run.
constexpr auto kMinJoinWait = 60ms;

std::chrono::milliseconds join_wait(std::chrono::steady_clock::duration rtt) {
  return std::clamp(std::chrono::ceil<std::chrono::milliseconds>(3 * rtt), std::chrono::milliseconds(kMinJoinWait),
                    std::chrono::milliseconds(kMaxBackoff));
}
// Silence while data is expected for this long: an ACK tells the server where we are, in case our
// address changed (a NAT rebinding), which it can learn only from a packet of ours.
constexpr auto kNudgeAfter = 200ms;
// How long a MANIFEST of another identity than the pinned one waits for one of the pinned identity.
constexpr auto kMismatchWait = 300ms;
// A server closes a handshake it has not heard from for its handshake timeout (3 s by default) and then
// drops that nonce's JOINs as replays, however long they are retransmitted: on a lossy path a few JOINs
// lost in a row are enough. A nonce whose JOINs go unanswered this long starts over with a new one, up
// to kFreshNonces times; at 30 % loss each way one nonce in 25 to 30 needed it.
constexpr auto kJoinNonceWait = 4s;
constexpr int kFreshNonces = 3;

}  // namespace

ServerLink::ServerLink(LinkOptions options, StreamReceiver& receiver)
    : options_(std::move(options)), receiver_(receiver) {}

void ServerLink::fail(std::string why) {
  state_ = State::failed;
  failure_ = std::move(why);
}

void ServerLink::start(TimePoint now, const Send& send) { begin_handshake(now, send); }

void ServerLink::begin_handshake(TimePoint now, const Send& send, bool keep_session) {
  proto::Join join;
  join.stream = options_.stream;
  // After a rejoin, ask for what is still missing.
  join.start_segment = receiver_.adopted() ? receiver_.next_needed() : options_.start_segment;
  asked_start_ = join.start_segment;
  join.window = options_.window;
  join.share = options_.share;
  join.flags = static_cast<std::uint8_t>((options_.systematic ? proto::join_flags::systematic : 0) |
                                         (options_.download ? proto::join_flags::download : 0));
  join.max_datagram = options_.max_datagram;
  join.max_rate_kbps = options_.max_rate_kbps;
  handshake_.emplace(join);
  mismatch_.reset();
  standby_ = keep_session && (state_ == State::established || standby_);
  standby_share_ = {options_.share, options_.systematic};
  if (!standby_) {
    open_.reset();
    seal_.reset();
    replay_ = {};
    session_ = 0;
    next_number_ = 0;
    received_ = 0;
    largest_ = 0;
    unacked_ = 0;
    ack_now_ = false;
    ack_due_ = TimePoint::max();
  }
  ++counters_.handshakes;
  pending_ = handshake_->hello();
  state_ = State::hello;
  attempts_ = 1;
  backoff_ = kHelloWait;
  retry_at_ = now + backoff_;
  hello_sent_at_ = now;
  send(pending_);
}

bool ServerLink::on_datagram(std::span<std::uint8_t> d, TimePoint now, const Send& send) {
  if (state_ == State::closed || state_ == State::failed) return false;
  ++counters_.packets;
  counters_.bytes += d.size();
  auto prefix = proto::parse_prefix(d);
  if (!prefix) {
    drop(prefix.error());
    return false;
  }
  switch (prefix->type) {
    case proto::PacketType::retry: {
      auto retry = proto::decode_retry(*prefix, d);
      if (!retry) return drop(retry.error()), false;
      on_retry(*retry, now, send);
      return false;
    }
    case proto::PacketType::reject: {
      auto reject = proto::decode_reject(*prefix, d);
      if (!reject) return drop(reject.error()), false;
      if (!handshake_ || (state_ != State::hello && state_ != State::join) ||
          CRYPTO_memcmp(reject->nonce.data(), handshake_->nonce().data(), reject->nonce.size()) != 0)
        return drop(proto::DropReason::unexpected), false;
      switch (reject->reason) {
        case proto::RejectReason::busy:
          // Try again later with a new handshake.
          state_ = State::hello;
          attempts_ = 0;
          retry_at_ = now + std::chrono::milliseconds(std::max<std::uint32_t>(reject->retry_after_ms, 100));
          pending_.clear();
          return false;
        case proto::RejectReason::unsupported_version: {
          std::string versions;
          for (const auto v : reject->versions) versions += (versions.empty() ? "" : ", ") + std::to_string(v);
          fail("the server does not speak protocol version " + std::to_string(proto::kVersion) + " (it speaks " +
               (versions.empty() ? "none it names" : versions) + ")");
          return false;
        }
        case proto::RejectReason::unknown_stream:
          fail("the server has no stream named '" + options_.stream + "'");
          return false;
        case proto::RejectReason::no_suite: fail("no cipher suite in common with the server"); return false;
        case proto::RejectReason::bad_request:
          fail("the server refused the session parameters (is --max-datagram large enough?)");
          return false;
      }
      return false;
    }
    case proto::PacketType::manifest: {
      if (state_ != State::join)
        return drop(proto::DropReason::unexpected), false;  // a duplicate after a retransmitted JOIN
      auto header = proto::parse_header(*prefix, d);
      if (!header) return drop(header.error()), false;
      on_manifest(*header, d, now, send);
      return false;
    }
    case proto::PacketType::segments:
    case proto::PacketType::coded:
    case proto::PacketType::bye:
    case proto::PacketType::ack: {
      auto header = proto::parse_header(*prefix, d);
      if (!header) return drop(header.error()), false;
      // Before the MANIFEST (lost, and being fetched again) its session's packets cannot be read yet;
      // those of a session on standby can.
      if (state_ != State::established && !standby_) return drop(proto::DropReason::unexpected), false;
      if (header->session != session_) return drop(proto::DropReason::unknown_session), false;
      return on_protected(d, *header, now, send);
    }
    default: return drop(proto::DropReason::unexpected), false;
  }
}

void ServerLink::on_retry(const proto::Retry& retry, TimePoint now, const Send& send) {
  if (state_ != State::hello && state_ != State::join) return drop(proto::DropReason::unexpected);
  auto join = handshake_->on_retry(retry);
  if (!join) return drop(proto::DropReason::unexpected);
  // The same token again: the answer to a HELLO sent again, while our JOIN with it is out already.
  if (state_ == State::join && *join == pending_) return drop(proto::DropReason::unexpected);
  backoff_ = state_ == State::hello && attempts_ == 1 ? join_wait(now - hello_sent_at_) : kHelloWait;
  if (state_ == State::hello) join_sent_at_ = now;  // a later RETRY's JOIN has the same nonce
  pending_ = *join;
  state_ = State::join;
  attempts_ = 1;
  retry_at_ = now + backoff_;
  send(pending_);
}

void ServerLink::on_manifest(const proto::Header& header, std::span<std::uint8_t> d, TimePoint now, const Send& send) {
  auto accepted = handshake_->on_manifest(header, d, options_.pinned);
  if (!accepted) {
    if (accepted.error() == proto::DropReason::auth && options_.pinned) note_identity_mismatch(header, d, now);
    return drop(accepted.error());
  }
  if (accepted->body.max_datagram > options_.max_datagram) return fail("the server ignored our datagram limit");
  const auto& keys = accepted->keys;
  open_.emplace(keys.suite, keys.server_key, keys.server_iv, proto::Aead::Direction::open);
  seal_.emplace(keys.suite, keys.peer_key, keys.peer_iv, proto::Aead::Direction::seal);
  coded_mac_.emplace(keys.coded_mac);
  const auto stream_suite = proto::suite_from_wire(accepted->body.stream_suite);
  stream_.emplace(*stream_suite, accepted->body.stream_key, std::array<std::uint8_t, proto::kIvSize>{},
                  proto::Aead::Direction::open);
  stream_key_ = accepted->body.stream_key;
  replay_ = {};
  replay_.accept(0);
  session_ = accepted->header.session;
  next_number_ = 0;
  received_ = 1;
  largest_ = 0;
  largest_at_ = now;
  if (recovering_) ++counters_.rejoins;
  standby_ = false;
  max_datagram_ = accepted->body.max_datagram;
  max_ack_delay_ = std::chrono::milliseconds(accepted->body.max_ack_delay_ms);
  idle_timeout_ = std::chrono::milliseconds(accepted->body.idle_timeout_ms);
  server_id_ = accepted->body.server_id;
  identity_ = accepted->handshake.identity;
  state_ = State::established;
  recovering_ = false;
  fresh_nonces_ = 0;
  last_heard_ = now;
  pending_.clear();
  admit_origin(accepted->body, now, send);
  if (state_ != State::established) return;
  // The first ACK confirms the key to the server, which sends no data before it.
  send_ack(now, send);
}

void ServerLink::admit_origin(const proto::ManifestBody& body, TimePoint now, const Send& send) {
  if (!proto::certificate_verifies(body))
    return convict("its stream certificate is not signed by the origin it names (" + proto::to_hex(body.origin) + ")",
                   send);
  // A file is served from where it was asked (its first segment for the live edge): a later start would
  // leave out the segments before it, the origin's signatures notwithstanding.
  const std::uint32_t start = asked_start_ == proto::kLiveEdge ? 0 : asked_start_;
  if ((body.stream_flags & proto::stream_flags::live) == 0 && body.start_segment != start)
    return convict("it starts a file stream at segment " + std::to_string(body.start_segment) + ", not " +
                       std::to_string(start) + " as asked",
                   send);
  origin_ = body.origin;
  unvouched_.reset();
  const auto verdict = receiver_.origins().admit(*identity_, body.origin);
  switch (verdict.standing) {
    case OriginTrust::Standing::refused: return fail(verdict.why);
    case OriginTrust::Standing::waiting: unvouched_.emplace(now, body); return;
    case OriginTrust::Standing::trusted:
      if (const std::string why = receiver_.adopt(body); !why.empty()) return fail(why);
      return;
  }
}

void ServerLink::convict(const std::string& why, const Send& send) {
  forged_ = true;
  close(send, proto::ByeReason::protocol_error);
  fail("forged: " + why);
}

// The wrong server, or the wrong key: a MANIFEST that answers our JOIN and is signed by its own
// identity, but not the pinned one. It fails the link only if no MANIFEST of the pinned identity
// follows within kMismatchWait: anyone who sees our HELLO can forge one, and must not end the session
// by that alone.
void ServerLink::note_identity_mismatch(const proto::Header& header, std::span<std::uint8_t> d, TimePoint now) {
  if (mismatch_) return;
  const auto sound = handshake_->on_manifest(header, d, std::nullopt);
  if (sound) mismatch_.emplace(now, sound->handshake.identity);
}

bool ServerLink::on_protected(std::span<std::uint8_t> d, const proto::Header& header, TimePoint now, const Send& send) {
  if (d.size() > max_datagram_) return drop(proto::DropReason::oversized), false;
  if (header.type == proto::PacketType::ack) return drop(proto::DropReason::unexpected), false;
  if (header.type == proto::PacketType::coded && !coded_authentic(d)) return drop(proto::DropReason::auth), false;
  if (!replay_.check(header.number)) return drop(proto::DropReason::replay), false;
  auto body = open_body(d, header);
  if (!body) return drop(proto::DropReason::auth), false;
  replay_.accept(header.number);
  if (state_ != State::established && !resume(now, send)) return false;
  ++received_;
  last_heard_ = now;
  if (header.number >= largest_) {
    largest_ = header.number;
    largest_at_ = now;
  }
  // Until its origin is vouched for, a relay's session only keeps the link: nothing it says is taken.
  if (unvouched_ && header.type != proto::PacketType::bye) return drop(proto::DropReason::unexpected), false;
  bool full_rank = false;
  switch (header.type) {
    case proto::PacketType::segments: on_segments(*body, now, send); break;
    case proto::PacketType::coded: {
      const auto coded = receiver_.read_coded(*body);
      if (!coded) return drop(coded.error()), false;
      ++counters_.coded;
      const auto result = receiver_.on_symbol(*coded, *server_id_, now);
      if (result == StreamReceiver::Result::rejected) drop(proto::DropReason::malformed);
      // At full rank the servers have sent enough, also while a batched decoder still solves it: the
      // stop signal goes out at once (what they send meanwhile arrives after it, for nothing).
      full_rank = result == StreamReceiver::Result::completed || result == StreamReceiver::Result::full_rank;
      if (full_rank) ack_now_ = true;
      if (++unacked_ >= kAckEvery) ack_now_ = true;
      if (ack_due_ == TimePoint::max()) ack_due_ = now + max_ack_delay_;
      break;
    }
    case proto::PacketType::bye: {
      auto bye = proto::decode_bye_body(*body);
      if (!bye) return drop(bye.error()), false;
      if (receiver_.complete()) {
        state_ = State::closed;
      } else if (bye->reason == proto::ByeReason::path_too_slow) {
        // The server's circuit breaker: joining again would only load the same path again.
        fail("path too slow for this stream: measured " + std::to_string(bye->measured_kbps) + " of " +
             std::to_string(bye->needed_kbps) + " kbit/s");
      } else {
        // The server is going away (or dropped us): start over with a new handshake.
        recovering_ = true;
        begin_handshake(now, send);
      }
      return false;
    }
    default: return drop(proto::DropReason::unexpected), false;
  }
  if (ack_now_) send_ack(now, send);
  return full_rank;
}

bool ServerLink::coded_authentic(std::span<const std::uint8_t> d) const {
  if (!options_.parts) return proto::coded_authentic(d, *coded_mac_);
  return proto::coded_authentic(d, *coded_mac_,
                                [&](std::span<const std::uint8_t> shared) { return options_.parts->digest(shared); });
}

std::optional<std::span<const std::uint8_t>> ServerLink::open_body(std::span<std::uint8_t> d,
                                                                   const proto::Header& header) {
  if (header.type != proto::PacketType::coded) return proto::open_packet(d, header, *open_);
  // Authentic for this session (checked before the replay window): the stream key opens the shared part.
  const auto shared = proto::coded_shared_part(d);
  if (!shared) return std::nullopt;
  return options_.parts ? options_.parts->open(*shared, stream_key_, *stream_) : proto::open_shared(*stream_, *shared);
}

bool ServerLink::resume(TimePoint now, const Send& send) {
  state_ = State::established;
  standby_ = false;
  recovering_ = false;
  pending_.clear();
  mismatch_.reset();
  ++counters_.resumes;
  if (standby_share_ == std::pair{options_.share, options_.systematic}) return true;
  // The shares were handed round while it was silent: the session, joined for the old share, ends and
  // a new one joins for the new share (as reshare does).
  ++counters_.reshares;
  send_bye(send, proto::ByeReason::done);
  begin_handshake(now, send);
  return false;
}

void ServerLink::on_segments(std::span<const std::uint8_t> body, TimePoint now, const Send& send) {
  const std::size_t max_bytes = std::size_t{receiver_.params().n} * receiver_.params().symbol_size;
  auto seg = proto::decode_segments_body(body, max_bytes);
  if (!seg) return drop(seg.error());
  switch (receiver_.on_sealed_segments(*seg, *origin_, now)) {
    case StreamReceiver::Sealed::accepted: ack_now_ = true; return;  // tell the server which descriptors arrived
    case StreamReceiver::Sealed::ahead: return drop(proto::DropReason::unexpected);
    case StreamReceiver::Sealed::forged:
      return convict("sent segment descriptors that its origin " + proto::to_hex(*origin_) + " did not seal", send);
    case StreamReceiver::Sealed::contradicts:
      // Sealed by a trusted origin, yet unlike what another trusted origin sealed: two origins disagree.
      if (*origin_ == *identity_)
        receiver_.origins().note_conflict("origins disagree about the segment table (" + options_.server.to_string() +
                                          " is an origin under key " + proto::to_hex(*origin_) +
                                          "): pin the genuine one with --origin-key");
      return fail("its origin's segment table contradicts what is known");
  }
}

void ServerLink::send_ack(TimePoint now, const Send& send) {
  // The body and datagram are the link's, kept between ACKs: a simulated peer of a swarm thread sends an
  // ACK every 16 packets, and allocating them each time was 4-5 % of the thread.
  proto::AckBody& ack = ack_;
  ack.largest = largest_;
  ack.ack_delay_us = static_cast<std::uint32_t>(std::min<long long>(
      std::chrono::duration_cast<std::chrono::microseconds>(now - largest_at_).count(), 0xFFFFFFFF));
  ack.received = received_;
  ack.known = receiver_.known();
  ack.next_needed = receiver_.next_needed();
  ack.flags = static_cast<std::uint8_t>((receiver_.complete() ? proto::ack_flags::complete : 0) |
                                        (receiver_.final_seen() ? proto::ack_flags::final_seen : 0));
  receiver_.ack_entries(ack.entries);
  ack.history.resize(kAckHistoryWords);
  for (std::size_t w = 0; w < kAckHistoryWords; ++w) ack.history[w] = replay_.seen_below(w);
  ack_out_.resize(max_datagram_);
  const std::size_t len = proto::seal_packet(ack_out_, {proto::PacketType::ack, session_, next_number_}, *seal_,
                                             [&](proto::Writer& w) { proto::write_body(w, ack); });
  if (len == 0) return;
  ++next_number_;
  send(std::span<const std::uint8_t>(ack_out_).first(len));
  ++counters_.acks_sent;
  last_ack_ = now;
  unacked_ = 0;
  ack_now_ = false;
  ack_due_ = TimePoint::max();
}

void ServerLink::poll_handshake(TimePoint now, const Send& send) {
  if (standby_) {
    // The server forgets a session silent for its idle timeout: then only the new one can come.
    if (now - last_heard_ > idle_timeout_) standby_ = false;
    else if (now - last_ack_ > kNudgeAfter) send_ack(now, send);
  }
  if (mismatch_ && now - mismatch_->first >= kMismatchWait)
    return fail("server identity mismatch: expected " + proto::to_hex(*options_.pinned) + ", got " +
                proto::to_hex(mismatch_->second));
  if (now < retry_at_) return;
  if (pending_.empty()) return begin_handshake(now, send);  // after a busy REJECT
  if (state_ == State::join && now - join_sent_at_ >= kJoinNonceWait && fresh_nonces_ < kFreshNonces &&
      attempts_ < options_.max_attempts) {
    ++fresh_nonces_;
    return begin_handshake(now, send, standby_);
  }
  if (attempts_ >= options_.max_attempts)
    return fail(state_ == State::hello ? "no answer from the server" : "the server does not complete the handshake");
  ++attempts_;
  backoff_ = std::min<std::chrono::milliseconds>(backoff_ * 2, kMaxBackoff);
  retry_at_ = now + backoff_;
  send(pending_);
  // A HELLO unanswered was lost (or its RETRY) more likely than not: twice now, as coding would, for
  // the second to fail too one time in 28 at 10 % loss each way, not one in 5. A HELLO costs the
  // server only a RETRY; a JOIN is not doubled, its duplicate finding the MANIFEST just resent.
  if (state_ == State::hello) send(pending_);
}

void ServerLink::poll(TimePoint now, const Send& send) {
  switch (state_) {
    case State::hello:
    case State::join: return poll_handshake(now, send);
    case State::established: {
      if (unvouched_) {
        if (receiver_.origins().trusts(unvouched_->second.origin)) {
          const auto body = unvouched_->second;
          admit_origin(body, now, send);
          if (state_ != State::established) return;
        } else if (now - unvouched_->first > options_.stall_timeout) {
          return fail("relays origin " + proto::to_hex(unvouched_->second.origin) +
                      ", which neither --origin-key nor a session with that origin vouches for: a relay cannot vouch "
                      "for its origin (pin it with --origin-key)");
        }
      }
      const bool wanting = !receiver_.complete();
      const auto silence = now - last_heard_;
      // Silence while segments are awaited (or for a whole idle timeout): the server restarted or
      // forgot us. Keep what was decoded and join again.
      if (wanting && ((receiver_.expecting_data() && silence > options_.stall_timeout) || silence > idle_timeout_)) {
        recovering_ = true;
        return begin_handshake(now, send, silence <= idle_timeout_);
      }
      const bool nudge =
          wanting && receiver_.expecting_data() && silence > kNudgeAfter && now - last_ack_ > kNudgeAfter;
      if (ack_now_ || now >= ack_due_ || nudge || (wanting && now - last_ack_ > idle_timeout_ / 4)) send_ack(now, send);
      return;
    }
    default: return;
  }
}

TimePoint ServerLink::next_poll() const {
  switch (state_) {
    // A handshake's timers are many and its life short: it is polled every time.
    case State::hello:
    case State::join: return TimePoint::min();
    case State::established: {
      if (ack_now_ || unvouched_) return TimePoint::min();
      // Each of poll()'s conditions waits for one of these: an ACK due, a silence, or time since our last ACK.
      const auto silence = std::min<Clock::duration>({kNudgeAfter, options_.stall_timeout, idle_timeout_});
      const auto since_ack = std::min<Clock::duration>(kNudgeAfter, idle_timeout_ / 4);
      return std::min({ack_due_, last_heard_ + silence, last_ack_ + since_ack});
    }
    default: return TimePoint::max();
  }
}

void ServerLink::acknowledge(TimePoint now, const Send& send) {
  if (state_ == State::established) send_ack(now, send);
}

void ServerLink::send_bye(const Send& send, proto::ByeReason reason) {
  std::vector<std::uint8_t> out(max_datagram_);
  const std::size_t len = proto::seal_packet(out, {proto::PacketType::bye, session_, next_number_}, *seal_,
                                             [&](proto::Writer& w) { proto::write_body(w, proto::ByeBody{reason}); });
  if (len == 0) return;
  ++next_number_;
  out.resize(len);
  send(out);
}

void ServerLink::close(const Send& send, proto::ByeReason reason) {
  if (state_ == State::established) {
    send_ack(Clock::now(), send);
    send_bye(send, reason);
  }
  if (state_ != State::failed) state_ = State::closed;
}

void ServerLink::reshare(std::uint16_t share, bool systematic, TimePoint now, const Send& send) {
  if (share == options_.share && systematic == options_.systematic) return;
  options_.share = share;
  options_.systematic = systematic;
  if (state_ != State::established) return;
  ++counters_.reshares;
  send_bye(send, proto::ByeReason::done);
  begin_handshake(now, send);
}

}  // namespace ncast::peer
