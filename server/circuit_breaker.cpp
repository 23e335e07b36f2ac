#include "server/circuit_breaker.hpp"

#include <algorithm>

namespace ncast::server {
namespace {

// The peer received less than this share of the media rate: the path does not carry the stream.
constexpr double kCarried = 0.9;
// The same after congestion lately, when the session makes up for none of its new loss: sessions of the
// bed's overload case beside an iperf3 TCP flow, sending the media rate and its headroom into 10-15 %
// loss, passed at 0.9 while their players stalled every second or two.
constexpr double kCarriedAfterCongestion = 0.97;
// A session is judged only in intervals it sent at least this share of the media rate: one that sent
// less had nothing more to send (a peer caught up with a live source), its rounds waited, or a busy
// server held it back. Such an interval neither counts against the path nor clears it: sessions of an
// overloaded path whose rounds stalled now and then were otherwise never ended.
constexpr double kSentEnough = 0.95;
// The weight of a judged interval in the moving average of what the path carried: about four seconds.
// A second's delivered share is a small sample (about 100 datagrams at 768 kbit/s) and random loss in
// bursts scatters it far more than independent loss of the same mean: at 10 % in bursts of 5 datagrams
// seconds' shares had a deviation of 0.075 (independent: 0.027), 2 % of the seconds fell short and two
// in a row ended sessions (6 of 10,000 realtime peers on the GPU host). Started from the first second's
// share, the average let one short first second count at once; from the media rate over four seconds,
// a queue that lets through 40 % is still short at once (0.85 after a second) and one that lets
// through 70 % from the second second.
constexpr double kAverageWeight = 1.0 / 4.0;

// A uniform number in [0, 1) from the session's seed and the interval's count (splitmix64).
double draw(std::uint64_t seed, std::uint64_t n) {
  std::uint64_t z = seed + (n + 1) * 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-53;
}

}  // namespace

CircuitBreaker::Carried CircuitBreaker::between(const Totals& from, const Totals& to, double seconds, double rate) {
  Carried c;
  c.sent_rate = (to.sent - from.sent) / seconds;
  // The path's delivery ratio, from the packets the interval's ACKs covered: what arrived of what was
  // sent, whenever it was sent and whenever the ACKs were read. Octets received per second blamed the
  // path for a server that read its ACKs late: 500 realtime peers at 30 % random loss on a server
  // short of CPU had intervals that received 0.45-0.6 of what they sent where the path carried 0.7.
  c.acked = to.acked - from.acked;
  const double ratio = c.acked > 0 ? std::min(1.0, (to.delivered - from.delivered) / c.acked) : 0.0;
  // What the peer receives at the session's pacing rate: a session whose loss estimate still lags the
  // truth, or whose server's thread came late, is not blamed for what it did not send (10,000 realtime
  // peers at 30 % random loss on a GPU host: 758-795 ended, judged on what arrived alone).
  c.carried = ratio * std::max(c.sent_rate, rate);
  return c;
}

std::optional<bool> CircuitBreaker::update(TimePoint now, const Totals& totals, double rate) {
  const double seconds = std::chrono::duration<double>(now - started_).count();
  if (config_.media_rate <= 0 || tripped_ || seconds < std::chrono::duration<double>(config_.interval).count())
    return std::nullopt;
  const auto [sent_rate, acked, carried] = between(at_start_, totals, seconds, rate);
  // An interval without an ACK tells nothing of the path's rate: a silent path is the silence timer's
  // (the session probes) and the idle timeout's.
  const bool judged = sent_rate >= kSentEnough * config_.media_rate && acked > 0;
  if (judged) average_ += kAverageWeight * (carried / config_.media_rate - average_);
  // Short both in this interval and on average, or short at all after congestion lately. A good
  // interval clears the count only once the average has recovered: sessions alternating short and good
  // seconds beside a TCP flow (0.6-0.8 of the stream on average) were never ended and stalled throughout.
  const bool lately = congested_lately();
  const double needed = (lately ? kCarriedAfterCongestion : kCarried) * config_.media_rate;
  if (judged) {
    ++judged_;
    carried_ = carried >= needed;
  }
  if (judged && carried < needed && (lately || average_ < kCarried)) {
    if (bad_ == 0) bad_carried_ = bad_seconds_ = 0;
    ++bad_;
    ++bad_total_;
    last_bad_ = judged_;
    bad_carried_ += carried * seconds;
    bad_seconds_ += seconds;
    const double shortfall = 1.0 - carried / config_.media_rate;
    tripped_ = bad_ >= config_.max_bad || (bad_ >= config_.min_bad && draw(config_.seed, bad_total_) < shortfall);
  } else if (judged && average_ >= kCarried) {
    bad_ = 0;
  }
  started_ = now;
  at_start_ = totals;
  if (!judged) return std::nullopt;
  return bad_ == 0;
}

}  // namespace ncast::server
