#include "server/rate_controller.hpp"

#include <algorithm>
#include <cmath>

namespace ncast::server {
namespace {

using std::chrono::microseconds;
using namespace std::chrono_literals;

// The send times an ACK may still name: every packet above the largest acknowledged. A paced stream
// has a few dozen in flight, a fast download thousands: the ring starts small and doubles as needed,
// since a session's every page of it is touched (and faulted in) at its start.
constexpr std::size_t kSentRingFirst = 256;
constexpr std::size_t kSentRingMax = 8192;
// A round lasts at least this long, so that its loss is counted over enough packets and timer jitter
// of a busy host does not pass for a rate change (BBR's round is one RTT; loopback's is microseconds).
constexpr auto kMinRound = 10ms;
constexpr std::uint64_t kMinRoundPackets = 32;  // and at least this many packets: a loss sample's size
constexpr auto kMinRttWindow = 10s;
// The path's own RTT, that queues are measured against: kept longer, or a queue a TCP flow keeps standing
// for ten seconds (the bed's fairness case) becomes the path and the session stops yielding to it.
constexpr auto kBaseRttWindow = 60s;
constexpr auto kRateSpan = 20ms;       // a delivery-rate sample spans at least this
constexpr double kStartupGain = 2.89;  // BBR's: the rate doubles each round trip
constexpr double kDrainGain = 0.5;
constexpr std::array<double, 8> kCycle{1.25, 0.9, 1, 1, 1, 1, 1, 1};
constexpr double kStartupGrowth = 1.25;  // startup ends after three rounds growing less than this
constexpr int kStartupFlatRounds = 3;
constexpr double kMaxRandomLoss = 0.5;  // made up for at most: beyond it the rate would double
// Congestion: a round's packets lost more than the random loss by this and by two standard
// deviations of the round's count.
constexpr double kExcessLoss = 0.01;
constexpr auto kDrainedDelay = 1ms;  // a queue this short counts as drained
constexpr int kMaxDrainRounds = 4;
constexpr int kQueueFreeRounds = 4;  // rounds in a row without a queue that end the window mode
constexpr double kBackoff = 0.7;     // the ceiling after congestion, of the delivery rate (CUBIC's beta)
// Datagrams a round trip the window grows by in a shared queue: with kBackoff's cut, as fast as TCP
// Reno's one per round trip with its halving (RFC 8312's TCP-friendly alpha, 3(1-beta)/(1+beta)).
constexpr double kWindowIncrease = 3 * (1 - kBackoff) / (1 + kBackoff);
// A window flow's pacing: faster than the window drains, so that the window, not the pacer, binds.
constexpr double kWindowPacingGain = 1.25;

double loss_of(std::uint64_t numbers, std::uint64_t delivered) {
  if (numbers == 0) return 0;
  return std::clamp(1.0 - static_cast<double>(delivered) / static_cast<double>(numbers), 0.0, 0.95);
}

}  // namespace

RateController::RateController(const RateControllerConfig& config, TimePoint now)
    : config_(config), datagram_(config.datagram), sent_(kSentRingFirst), last_ack_at_(now), last_sent_at_(now) {
  round_.started = now;
  round_.gain = kStartupGain;
}

void RateController::on_sent(std::uint64_t number, std::size_t bytes, TimePoint now) {
  // The peer counts packets, not octets: a packet delivered is taken to be of the mean size sent.
  datagram_ += (static_cast<double>(bytes) - datagram_) / 16;
  if (number - std::min(largest_acked_, number) >= sent_.size() && sent_.size() < kSentRingMax) grow_sent();
  sent_[number % sent_.size()] = {number, now};
  largest_sent_ = std::max(largest_sent_, number);
  last_sent_at_ = now;
  tail_probe_ = false;
}

void RateController::on_ack(std::uint64_t largest, std::uint32_t received, Duration ack_delay, TimePoint now,
                            Recent recent) {
  if (!has_ack_) {
    has_ack_ = true;
    delivered_ = received;
    start_round(now);
  } else {
    const auto grew = static_cast<std::int32_t>(received - last_received_);
    if (grew > 0) delivered_ += static_cast<std::uint64_t>(grew);
  }
  if (static_cast<std::int32_t>(received - last_received_) >= 0) last_received_ = received;
  last_ack_at_ = now;
  silent_ = false;
  if (largest <= largest_acked_ && largest_acked_ != 0) return;  // nothing newer: no sample
  largest_acked_ = largest;

  const Sent& s = sent_[largest % sent_.size()];
  if (s.number == largest && s.at != TimePoint{}) {
    const auto since = std::chrono::duration_cast<microseconds>(now - s.at);
    // The peer's hold time is not the path's; a hold longer than the whole RTT is a clock's quirk.
    rtt_sample(since > ack_delay ? since - ack_delay : since, now);
    sample_rate(s.at, now);
  }
  // Packets overtaken by the largest are not lost: rounds are counted only up to where reordering ends.
  if (recent.span > reorder_span_) reordering_deeper(now);
  reorder_span_ = std::max(reorder_span_, recent.span);
  const std::uint64_t span = std::min(recent.span, largest_acked_);
  count_loss(largest_acked_ - span, delivered_ - std::min(recent.arrived, delivered_), now);
  if (largest_acked_ >= round_.first_number && now - round_.started >= kMinRound &&
      largest_sent_ >= round_.first_number + kMinRoundPackets)
    end_round(now);
}

void RateController::grow_sent() {
  std::vector<Sent> grown(sent_.size() * 2);
  for (const Sent& s : sent_)
    if (s.at != TimePoint{}) grown[s.number % grown.size()] = s;
  sent_ = std::move(grown);
}

void RateController::sample_rate(TimePoint sent_at, TimePoint now) {
  // The delivery rate since an ACK at least kRateSpan ago, over the longer of the ACKs' and the sends'
  // spans (BBR's rate sample, over more than one ACK): ACKs that a busy host handles late and then
  // together would otherwise pass for a path several times faster than it is.
  acks_.push_back({now, delivered_, sent_at});
  while (acks_.size() > 2 && now - acks_[1].at >= kRateSpan) acks_.pop_front();
  const AckPoint& ref = acks_.front();
  if (now - ref.at < kRateSpan || delivered_ <= ref.delivered) return;
  const double span = std::max(std::chrono::duration<double>(now - ref.at).count(),
                               std::chrono::duration<double>(sent_at - ref.sent_at).count());
  round_.max_bw = std::max(round_.max_bw, static_cast<double>(delivered_ - ref.delivered) * datagram_ / span);
}

void RateController::rtt_sample(Duration rtt, TimePoint now) {
  if (rtt <= Duration::zero()) rtt = Duration(1);
  if (!has_rtt_) {
    has_rtt_ = true;
    srtt_ = min_rtt_ = base_rtt_ = rtt;
    min_rtt_at_ = base_rtt_at_ = now;
  } else {
    srtt_ = (7 * srtt_ + rtt) / 8;
    if (rtt <= min_rtt_ || now - min_rtt_at_ > kMinRttWindow) {
      min_rtt_ = rtt;
      min_rtt_at_ = now;
    }
    if (rtt <= base_rtt_ || now - base_rtt_at_ > kBaseRttWindow) {
      base_rtt_ = rtt;
      base_rtt_at_ = now;
    }
  }
  round_.min_rtt = round_.min_rtt == Duration::zero() ? rtt : std::min(round_.min_rtt, rtt);
  round_.max_rtt = std::max(round_.max_rtt, rtt);
  judged_.min_rtt = judged_.min_rtt == Duration::zero() ? rtt : std::min(judged_.min_rtt, rtt);
}

bool RateController::queue_left(Duration round_min_rtt) const {
  return has_rtt_ && round_min_rtt > base_rtt_ + std::max<Duration>(kDrainedDelay, base_rtt_ / 4);
}

bool RateController::excess_loss(double loss, std::uint64_t numbers) const {
  if (!loss_known_ || numbers == 0) return false;
  const auto n = static_cast<double>(numbers);
  if (mode_ == Mode::startup) {
    // Two proportions compared (pooled), each over the packets it was counted on: in startup the random
    // loss rests on the first round or two, a few dozen packets. Taken as exact, 10 % random loss read
    // as 4.5 % there made a round's 14 % pass for congestion, and the session left startup at 30 of
    // 100 Mbit/s and took 400 ms to climb back (the bed's randomloss). Later the estimate is taken as
    // exact, as before: where a standing queue stops its learning (a TCP flow beside), its few packets
    // would otherwise blunt the test (pooled throughout, two fairness runs gave TCP 23-24 %, not 29-32 %).
    const auto m = static_cast<double>(loss_packets_);
    const double p = std::max((loss * n + random_loss_ * m) / (n + m), 0.01);
    return loss > random_loss_ + std::max(kExcessLoss, 2 * std::sqrt(p * (1 - p) * (1 / n + 1 / m)));
  }
  if (window_mode_) {
    // In a queue others share, a loss beyond what the random loss explains is a loss event, as TCP
    // takes any: a test that waits for a share of the round lets the larger flow cut less often.
    const double expected = random_loss_ * n;
    return loss * n > expected + 2 * std::sqrt(expected * (1 - random_loss_)) + 0.5;
  }
  const double p = std::max(random_loss_, 0.01);
  return loss > random_loss_ + std::max(kExcessLoss, 2 * std::sqrt(p * (1 - p) / n));
}

void RateController::count_loss(std::uint64_t settled, std::uint64_t delivered, TimePoint now) {
  // Each round's packets are judged by the ACKs that settle them: from the ACK that first settled the
  // round's first packet to the one that first settled the next round's. The loss is then that of the
  // packets sent at the round's gain, not of those still in flight from the round before.
  // A span of reordering that grew moves the point settled back: nothing new is settled then.
  if (judged_.valid && (settled < judged_.settled || delivered < judged_.delivered)) return;
  while (!marks_.empty() && marks_.front().first_number <= settled) {
    const Mark mark = marks_.front();
    marks_.pop_front();
    if (judged_.valid) {
      const std::uint64_t numbers = settled - judged_.settled;
      const double loss = loss_of(numbers, delivered - judged_.delivered);
      // Random loss is learnt where the sending rate was not above the bottleneck's: at a gain of one
      // or less, and in startup while the delivery rate still grows with the sending rate.
      // Where a queue stood, loss may be the queue's: a rate that overran the bottleneck would learn
      // its own drops as random loss and send still more to make up for them.
      const bool below = (judged_.gain <= 1 || (judged_.startup && startup_flat_rounds_ == 0)) &&
                         judged_.min_rtt != Duration::zero() && !queue_left(judged_.min_rtt);
      if (numbers >= 16) {
        if (judged_.gain >= 1 && excess_loss(loss, numbers)) on_congestion(now);
        if (below) learn_loss(loss, numbers);
      }
    }
    judged_ = {true, settled, delivered, mark.gain, mark.startup, Duration::zero()};
  }
}

void RateController::learn_loss(double loss, std::uint64_t numbers) {
  // The median of the last samples: a round that also lost to a queue moves it little.
  loss_samples_[loss_count_ % loss_samples_.size()] = loss;
  loss_sizes_[loss_count_ % loss_sizes_.size()] = numbers;
  ++loss_count_;
  const std::size_t n = std::min(loss_count_, loss_samples_.size());
  loss_packets_ = 0;
  for (std::size_t i = 0; i < n; ++i) loss_packets_ += loss_sizes_[i];
  std::array<double, kLossSamples> sorted = loss_samples_;
  std::sort(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(n));
  random_loss_ = sorted[n / 2];
  loss_known_ = true;
}

void RateController::end_round(TimePoint now) {
  const double round_bw = round_.max_bw;

  // The delivery rate: the maximum of the last ten rounds' maxima, within the ceiling.
  bw_rounds_[rounds_ % bw_rounds_.size()] = round_bw;
  ++rounds_;

  advance_mode(round_bw, now);

  bw_ = *std::max_element(bw_rounds_.begin(), bw_rounds_.end());
  if (ceiling_ > 0) {
    // Additive increase of the ceiling, as TCP's window grows by a datagram per RTT.
    const double rtt = srtt_seconds();
    const double round_s = std::chrono::duration<double>(now - round_.started).count();
    ceiling_ += config_.datagram * round_s / (rtt * rtt);
    bw_ = std::min(bw_, ceiling_);
    update_window_mode(rtt, round_s, now);
  }

  start_round(now);
}

void RateController::update_window_mode(double rtt, double round_s, TimePoint now) {
  // A queue the session could not drain in rounds below its rate is others' (advance_mode): a bottleneck
  // shared with flows that keep it standing, TCP's. There the session becomes a window flow as TCP is
  // (ACK-clocked, a datagram more a round trip, cut by kBackoff on congestion): a rate that follows its
  // own delivery rate takes every share TCP's backoffs free (ncast 71-79 % of the bed's link beside one
  // iperf3 flow), one paced at window/RTT without the window's cap 65-89 %, with the cap 37-69 %
  // (bench/results/2026-11-27-fairness-window.md). The mode is left only after kQueueFreeRounds rounds in
  // a row found no queue: others that cut together drain it for a moment, and leaving then restarted the
  // window from the rate (ncast 59-76 %, bench/results/2026-11-27-fairness-swing.md).
  queue_free_rounds_ = queue_left(round_.min_rtt) ? 0 : queue_free_rounds_ + 1;
  if (queue_free_rounds_ >= kQueueFreeRounds) others_queue_ = false;
  if (others_queue_ && !window_mode_) {
    max_rtts_.fill(Duration::zero());
    min_rtts_.fill(Duration::max());
  }
  // The queue's swing while shared: from its lowest to its fullest over the last rounds.
  const Duration full = *std::max_element(max_rtts_.begin(), max_rtts_.end());
  const Duration low = *std::min_element(min_rtts_.begin(), min_rtts_.end());
  max_rtts_[rounds_ % max_rtts_.size()] = round_.max_rtt;
  min_rtts_[rounds_ % min_rtts_.size()] = round_.min_rtt;
  if (others_queue_ && window_mode_) {
    // A round in the top quarter of the swing: a window flow beside loses datagrams there, in bursts, where
    // the paced session's find room between them. Cutting only at the top tenth the session kept 64-69 %
    // of the bed's link beside TCP, at the top quarter 48-59 %. Judged against the swing, not the empty
    // path: a queue others keep standing that varies by a millisecond or two is not a full one.
    if (full > low + 4 * kDrainedDelay && round_.max_rtt >= full - (full - low) / 4) on_congestion(now);
    window_ += kWindowIncrease * config_.datagram * round_s / rtt;
  } else if (others_queue_) {
    window_ = std::min(ceiling_, bw_) * rtt;
    ++window_entries_;
  }
  window_mode_ = others_queue_;
}

void RateController::start_round(TimePoint now) {
  round_ = {};
  round_.first_number = largest_sent_ + 1;
  round_.started = now;
  round_.gain = gain();
  marks_.push_back({round_.first_number, round_.gain, mode_ == Mode::startup});
}

RateController::Duration RateController::cut_window() const { return std::max<Duration>(2 * srtt_, 2 * kMinRound); }

void RateController::reordering_deeper(TimePoint now) {
  // The packets counted lost below the old span may have been overtaken ones: a cut of the last two
  // round trips is taken back, as TCP undoes a window reduction whose retransmission proved spurious.
  // A congestion that was real shows again in the next rounds.
  if (!before_cut_.valid || now - last_congestion_ > cut_window()) return;
  ceiling_ = before_cut_.ceiling;
  bw_rounds_ = before_cut_.bw_rounds;
  bw_ = *std::max_element(bw_rounds_.begin(), bw_rounds_.end());
  if (ceiling_ > 0) bw_ = std::min(bw_, ceiling_);
  if (before_cut_.mode == Mode::startup) mode_ = Mode::startup;
  before_cut_.valid = false;
  ++undone_cuts_;
}

void RateController::on_congestion(TimePoint now) {
  // One event per round trip and a round: the round after a cut still carries packets sent before it.
  if (congestion_events_ > 0 && now - last_congestion_ < cut_window()) return;
  ++congestion_events_;
  last_congestion_ = now;
  before_cut_ = {true, ceiling_, bw_rounds_, mode_};
  const double base = std::max(bw_, config_.min_rate);
  ceiling_ = kBackoff * (ceiling_ > 0 ? std::min(ceiling_, base) : base);
  for (double& b : bw_rounds_) b = std::min(b, ceiling_);
  window_ *= kBackoff;
  if (mode_ == Mode::startup) mode_ = Mode::drain;
}

void RateController::advance_mode(double round_bw, TimePoint now) {
  switch (mode_) {
    case Mode::startup:
      if (round_bw >= kStartupGrowth * startup_best_) {
        startup_best_ = round_bw;
        startup_flat_rounds_ = 0;
      } else if (++startup_flat_rounds_ >= kStartupFlatRounds) {
        mode_ = Mode::drain;
      }
      return;
    case Mode::drain:
      // Until the queue that startup built is gone (the RTT back near its minimum), a few rounds at most.
      if (round_.gain < 1 && (!queue_left(round_.min_rtt) || ++drain_rounds_ >= kMaxDrainRounds)) {
        mode_ = Mode::probe_bw;
        drain_rounds_ = 0;
        cycle_ = 2;  // cruise first: the drain left no queue to measure against yet
      }
      return;
    case Mode::probe_bw:
      // The round below the rate drains what the round above it queued: it lasts until it has, a few
      // rounds at most (a queue that others keep full does not hold it there).
      if (kCycle[cycle_] < 1 && queue_left(round_.min_rtt)) {
        if (++drain_rounds_ < kMaxDrainRounds) return;
        // Left after the rounds below the rate, and more than a probe round above the rate could have
        // queued (a quarter of a round): others keep it. A queue of its own only slow to drain (a rate
        // just below the link's, at 10 % random loss) is a probe's. The mode is only entered here, not
        // left: a round near the bottom of others' swing would otherwise end it each cycle.
        const auto round = std::chrono::duration_cast<Duration>(now - round_.started);
        if (round_.min_rtt > base_rtt_ + kDrainedDelay + round / 4) others_queue_ = true;
      }
      drain_rounds_ = 0;
      cycle_ = (cycle_ + 1) % kCycle.size();
      return;
  }
}

double RateController::gain() const {
  if (window_mode_ && mode_ == Mode::probe_bw) return 1;  // the window probes, a datagram a round trip
  switch (mode_) {
    case Mode::startup: return kStartupGain;
    case Mode::drain: return kDrainGain;
    case Mode::probe_bw: return kCycle[cycle_];
  }
  return 1;
}

void RateController::check_silence(TimePoint now, Duration timeout) {
  if (!has_ack_ || silent_ || largest_sent_ <= largest_acked_) return;
  // Outstanding since the first packet the last ACK did not cover was sent.
  const Sent& s = sent_[(largest_acked_ + 1) % sent_.size()];
  const TimePoint since = s.number == largest_acked_ + 1 ? std::max(s.at, last_ack_at_) : last_ack_at_;
  if (now - since <= timeout) return;
  silent_ = true;
  ++silences_;
}

// Never below 100 µs: at loopback's RTT of microseconds the ceiling's increase per RTT² and a window's
// rate would know no bound.
double RateController::srtt_seconds() const { return std::max(1e-4, std::chrono::duration<double>(srtt_).count()); }

double RateController::delivered_share() const { return 1.0 - std::min(random_loss_, kMaxRandomLoss); }

double RateController::pacing_rate() const {
  if (silent_) return config_.min_rate;
  double rate = config_.initial_rate;
  if (window_mode_) {
    rate = kWindowPacingGain * window_ / srtt_seconds() / delivered_share();
  } else if (bw_ > 0) {
    rate = gain() * bw_ / delivered_share();
  } else if (mode_ == Mode::startup && round_.max_bw > 0) {
    rate = kStartupGain * round_.max_bw;
  }
  return std::clamp(rate, config_.min_rate, std::max(config_.min_rate, config_.max_rate));
}

bool RateController::window_open() const {
  if (!window_mode_ || silent_ || tail_probe_) return true;
  // Packets above the largest acknowledged are in flight (or lost with it, which a later ACK settles).
  return static_cast<double>(largest_sent_ - largest_acked_) * datagram_ < window_ / delivered_share();
}
void RateController::check_window(TimePoint now) {
  const auto quiet = std::max<Duration>(2 * srtt_, 2 * kMinRound);
  tail_probe_ = now - last_ack_at_ > quiet && now - last_sent_at_ > quiet;
}

}  // namespace ncast::server
