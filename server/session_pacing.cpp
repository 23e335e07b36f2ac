// A session's pacing (docs/protocol.md section 9): the rate it sends at, its controller's for a download,
// the stream's bitrate made up for loss for a paced session, and when the bucket allows a packet.
#include "server/session.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ncast::server {
namespace {

// A paced session makes up for at most half its datagrams lost.
constexpr double kMaxMadeUp = 0.5;
// RTT growth that counts as a queue: above what timer and scheduling jitter of a busy server add.
constexpr auto kQueueGrowth = std::chrono::milliseconds(5);
constexpr auto kWindowPoll = std::chrono::microseconds(500);

}  // namespace

double Session::rate() const {
  // A download session goes at its controller's rate, within its cap (docs/streaming.md, "Congestion
  // control"). Into a silent path (a blackhole?) any session only probes until ACKs return.
  if (config_.download || cc_.silent()) return cc_.pacing_rate();
  return paced_rate();
}

double Session::paced_rate() const {
  // A paced session makes up for the loss it measures, or a lossy peer could never keep up with
  // playback. A live stream's measured bitrate may rise after the session began: the session keeps up
  // with it. While the path does not carry the stream (circuit breaker), it backs off: no headroom.
  // Nor does it make up for more loss than its path had while it carried the stream calmly, once the
  // loss came with congestion (bad intervals, or an RTT grown by a queue): that loss is the queue's, and
  // redundancy sent into a full queue only fills it (RFC 8085).
  // Made up for, the loss of the bed's overload case kept a dozen sessions sending twice the media rate
  // beside an iperf3 TCP flow for 15 s, losing half of it and stalling every second or two. Loss the path
  // had before (random loss: 30 % at 10,000 realtime peers on the GPU host) is still made up for: a cap
  // halved per bad second ended 2,312 of those peers (39 % late; uncapped 0.34 %).
  const auto now_bitrate = static_cast<double>(source_.info().bitrate);
  const double follow = config_.bitrate > 0 ? std::max(1.0, now_bitrate / static_cast<double>(config_.bitrate)) : 1.0;
  const bool congestion = breaker_.congested_lately() || queue_grown();
  const double made_up = std::min({loss_, kMaxMadeUp, congestion ? calm_loss_ : 1.0});
  return follow * (breaker_.congested() ? config_.media_rate : config_.rate) / (1.0 - made_up);
}

bool Session::queue_grown() const {
  return calm_rtt_.count() > 0 && cc_.has_rtt() &&
         cc_.srtt() > calm_rtt_ + std::max<std::chrono::microseconds>(kQueueGrowth, calm_rtt_ / 4);
}

std::size_t Session::burst_bytes() const {
  // A paced session whose path did not carry its stream lately sends one datagram at a time: the tail of
  // a burst into a queue that a competing flow keeps full is lost (200 realtime sessions behind 50 Mbit/s
  // beside an iperf3 TCP flow got 16 % of the link through in bursts of 8, 65 % one at a time), and a
  // session kept on its shared path (its breaker restarted) is still beside that flow. Bursts otherwise:
  // a busy server's wake-ups are fewer.
  const std::size_t datagrams = breaker_.congested_lately() ? 1 : config_.burst;
  return datagrams * config_.max_datagram;
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
  cc_.check_window(now);
  counters_.silences = cc_.silences();
  if (!config_.download && confirmed_) {
    const auto judged = breaker_.update(now, path_totals(), rate());
    // Loss beyond what the session may make up for is not a path that carries the stream, however calm:
    // a session that joined a queue already full measured 0.56-0.69 from its first second.
    if (judged && breaker_.carried_calmly() && loss_ <= kMaxMadeUp && !queue_grown() && cc_.has_rtt()) {
      calm_loss_ = loss_;
      calm_rtt_ = cc_.min_rtt();
    }
  }
  pacing_.set_limits(rate(), bucket_size());
  pacing_.refill(now);
}

void Session::kept_on_shared_path() {
  breaker_.restart();
  // Made up for, the queue's loss had the bed's overload survivors pace at 1.2-1.25 times what they need
  // together right after the shed (some at twice the media rate), filling again the queue it emptied.
  loss_mean_ = loss_weight_ = 0;
  loss_ = std::min(loss_, calm_loss_);
  have_ack_ = false;  // and its next sample counts from the next ACK on
}

CircuitBreaker::Totals Session::path_totals() const {
  // Octets sent; the packets the ACKs covered (numbers up to the largest) and those of them received.
  return {static_cast<double>(counters_.bytes_sent), static_cast<double>(largest_acked_),
          static_cast<double>(cc_.delivered())};
}

std::size_t Session::in_a_row() const {
  constexpr std::size_t kAny = std::numeric_limits<std::size_t>::max();
  if (config_.download || config_.burst <= 1) return kAny;
  for (const Flight& f : flights_) {
    if (f.decoded || f.waiting || f.sent >= f.target) continue;
    // What the peer surely still needs of this server: its share of the deficit, less every packet in
    // flight (as if all of them arrive, each innovative).
    const double share = config_.share / static_cast<double>(proto::kFullShare);
    const auto needed = static_cast<std::size_t>(std::ceil(deficit(f) * share - 1e-9));
    const std::size_t in_flight = f.in_flight.size();
    return needed > in_flight ? needed - in_flight : 1;
  }
  return kAny;
}

TimePoint Session::pacing_ready(std::size_t bytes, TimePoint now) const {
  if (can_send(bytes)) return now;
  // A closed window opens with an ACK, which schedules the session at once; the wake below only lets the
  // tail probe go out when none comes.
  if (pacing_.available(static_cast<double>(bytes)))
    return now + std::max<std::chrono::microseconds>(kWindowPoll, srtt_ / 4);
  // Rounded up, and never now: a wait that truncated to zero would have the scheduler spin.
  const double wait_ns = std::ceil(1e9 * (static_cast<double>(bytes) - pacing_.tokens()) / rate());
  return now + std::chrono::nanoseconds(std::max<long long>(1000, static_cast<long long>(wait_ns)));
}

}  // namespace ncast::server
