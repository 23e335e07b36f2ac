// A session's loss and RTT estimates from its peer's ACKs (docs/protocol.md section 9): the loss it
// makes up for, the smoothed RTT, and RFC 9002's loss detection over each round's packets in flight,
// with reordering found afterwards raising its thresholds.
#include "server/session.hpp"

#include <algorithm>

namespace ncast::server {
namespace {

using std::chrono::microseconds;

constexpr microseconds kGranularity{1000};  // RFC 9002's timer granularity: a loss delay's least
constexpr std::size_t kMaxLostRemembered = 1024;

}  // namespace

void Session::update_loss_estimate(const proto::AckBody& ack) {
  // Loss: packets lost against packets sent, over an interval of at least 8 packets. With a history
  // in the ACKs these are the coded packets that loss detection settled, those found reordered counted
  // back as received; without, the packets the peer accepted against packet numbers sent. The interval
  // spans as many ACKs as it takes: a paced peer acknowledges nearly every packet. A sample may be
  // negative (packets counted lost in one interval arrive in the next), and clamping it or the average
  // at zero would count reordered packets as lost for good.
  const bool settled = !ack.history.empty();
  const std::uint64_t sent = settled ? settled_ : ack.largest;
  std::int64_t lost = settled_lost_;
  if (!settled) {
    const auto received = static_cast<std::uint32_t>(ack.received - last_received_);  // mod 2^32
    lost = last_lost_ + static_cast<std::int64_t>(ack.largest - last_sent_) - static_cast<std::int64_t>(received);
  }
  if (!have_ack_ || settled != last_settled_) {
    // The first sample, or the peer's ACKs changed kind: start counting afresh.
    have_ack_ = true;
    if (!settled) lost = 0;
  } else if (sent >= last_sent_ + 8) {
    const double interval = static_cast<double>(sent - last_sent_);
    const double sample = std::clamp(static_cast<double>(lost - last_lost_) / interval, -1.0, kMaxLoss);
    // A moving average over about 512 packets, a larger interval weighing more. Taken over the samples
    // alone (Adam's bias correction): the average starts at 0, and with that start's weight in it a paced
    // session at 768 kbit/s and 30 % loss made up for 6 % after its first second and 17 % after its third,
    // the peer received 0.75-0.8 of the stream meanwhile, and the circuit breaker ended 6-8 % of the
    // sessions of a swarm as "path too slow" in their second or third second.
    const double gain = 0.5 * std::min(1.0, interval / 256.0);
    loss_mean_ += gain * (sample - loss_mean_);
    loss_weight_ += gain * (1.0 - loss_weight_);
    loss_ = std::clamp(loss_mean_ / loss_weight_, 0.0, kMaxLoss);
  } else {
    return;
  }
  last_sent_ = sent;
  last_lost_ = lost;
  last_received_ = ack.received;
  last_settled_ = settled;
}

void Session::sample_rtt(microseconds sample) {
  if (sample.count() <= 0) return;
  latest_rtt_ = sample;
  if (!have_rtt_) {
    srtt_ = sample;
    rttvar_ = sample / 2;
    have_rtt_ = true;
    return;
  }
  const auto err = sample > srtt_ ? sample - srtt_ : srtt_ - sample;
  rttvar_ = (3 * rttvar_ + err) / 4;
  srtt_ = (7 * srtt_ + sample) / 8;
}

microseconds Session::loss_delay() const {
  const microseconds rtt = have_rtt_ ? std::max({srtt_, latest_rtt_, reorder_delay_}) : kInitialRto;
  return std::clamp(rtt * 9 / 8, kGranularity, kMaxRto);
}

bool Session::lost(const SentPacket& p, TimePoint now) const {
  return p.number < largest_acked_ && (largest_acked_ - p.number >= reorder_packets_ || now - p.at >= loss_delay());
}

void Session::settle(Flight& f, const proto::AckBody* ack, TimePoint now) {
  std::erase_if(f.in_flight, [&](const SentPacket& p) {
    if (ack && proto::acknowledges(*ack, p.number)) return ++settled_, true;
    if (!lost(p, now)) return false;
    ++settled_;
    ++settled_lost_;
    lost_.push_back({p.number, p.at});
    if (lost_.size() > kMaxLostRemembered) lost_.pop_front();
    return true;
  });
  f.loss_at = TimePoint::max();
  for (const SentPacket& p : f.in_flight)
    if (p.number < largest_acked_) f.loss_at = std::min(f.loss_at, p.at + loss_delay());
}

void Session::detect_spurious_losses(const proto::AckBody& ack, TimePoint now) {
  // An ACK without a history covers everything up to its largest: it tells nothing of single packets.
  const std::uint64_t span = 64 * ack.history.size();
  std::erase_if(lost_, [&](const LostPacket& l) {
    if (span > 0 && proto::acknowledges(ack, l.number)) {
      reorder_packets_ = std::min(span, std::max(reorder_packets_, ack.largest - l.number + 1));
      reorder_delay_ =
          std::min(kMaxRto, std::max(reorder_delay_, std::chrono::duration_cast<microseconds>(now - l.at)));
      --settled_lost_;  // received after all
      return true;
    }
    return l.number + span < ack.largest;  // beyond what this peer's ACKs tell
  });
}

}  // namespace ncast::server
