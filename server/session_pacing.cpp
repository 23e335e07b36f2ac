// A session's pacing (docs/protocol.md section 9): the rate it sends at, its controller's for a download,
// the stream's bitrate made up for loss for a paced session, and when the bucket allows a packet.
#include "server/session.hpp"

#include <algorithm>
#include <cmath>

namespace ncast::server {

double Session::rate() const {
  // A download session goes at its controller's rate, within its cap (docs/streaming.md, "Congestion
  // control"). Into a silent path (a blackhole?) any session only probes until ACKs return.
  if (config_.download || cc_.silent()) return cc_.pacing_rate();
  return paced_rate();
}

double Session::paced_rate() const {
  // A paced session makes up for the loss it measures, or a lossy peer could never keep up with
  // playback. A live stream's measured bitrate may rise after the session began: the session keeps up
  // with it. While the path does not carry the stream (circuit breaker), it backs off: no headroom,
  // and no more redundancy for the loss that a full queue adds.
  const auto now_bitrate = static_cast<double>(source_.info().bitrate);
  const double follow = config_.bitrate > 0 ? std::max(1.0, now_bitrate / static_cast<double>(config_.bitrate)) : 1.0;
  // The random loss is still made up for: the controller's estimate, learnt where no queue stood, or the
  // loss of the last interval that carried the stream (none before one has).
  const double random_loss = std::max(uncongested_loss_, cc_.random_loss());
  if (breaker_.congested()) return follow * config_.media_rate / (1.0 - std::min(random_loss, 0.5));
  return follow * config_.rate / (1.0 - std::min(loss_, 0.5));
}

double Session::bucket_size() const {
  // A few milliseconds' worth (at least two datagrams) keeps timer jitter from costing rate.
  return std::max({2.0 * config_.max_datagram, static_cast<double>(burst_bytes()), rate() * 0.004});
}

void Session::refill(TimePoint now) {
  // Silent for four retransmission timeouts (QUIC's persistent congestion is three probe timeouts), not
  // one: after a single RTO a paced session whose peer was busy failing over to it was throttled to the
  // probe rate, and the peer finished 2.5 s late (Network.AServerDiesAndTheOtherTakesItsShare).
  cc_.check_silence(now, rto(2));
  counters_.silences = cc_.silences();
  if (!config_.download && confirmed_) {
    // The loss to make up for while backing off is the loss of the last interval that carried the
    // stream (none before one has): not the loss that the full queue adds.
    if (breaker_.update(now, static_cast<double>(counters_.bytes_sent),
                        static_cast<double>(cc_.delivered()) * config_.max_datagram, cc_.random_loss()))
      uncongested_loss_ = loss_;
  }
  pacing_.set_limits(rate(), bucket_size());
  pacing_.refill(now);
}

bool Session::one_at_a_time() const {
  if (config_.download || config_.burst <= 1) return false;
  for (const Flight& f : flights_) {
    if (f.decoded || f.waiting || f.sent >= f.target) continue;
    // The peer completes somewhere in the round's last redundancy-and-spread packets; two bursts'
    // worth covers that at the loss rates the rate makes up for.
    return f.target - f.sent <= 2u * config_.burst;
  }
  return false;
}

TimePoint Session::pacing_ready(std::size_t bytes, TimePoint now) const {
  if (can_send(bytes)) return now;
  // Rounded up, and never now: a wait that truncated to zero would have the scheduler spin.
  const double wait_ns = std::ceil(1e9 * (static_cast<double>(bytes) - pacing_.tokens()) / rate());
  return now + std::chrono::nanoseconds(std::max<long long>(1000, static_cast<long long>(wait_ns)));
}

}  // namespace ncast::server
