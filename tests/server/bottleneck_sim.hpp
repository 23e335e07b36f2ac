#pragma once
// A simulated path for the rate controller's tests: a sender paced at the controller's rate, a
// bottleneck of a given rate with a tail-drop queue of a given size (as tc tbf), random loss after it,
// a propagation delay each way (varying per packet by a jitter, which reorders them), and a peer that acknowledges
// every 16 packets or after 5 ms (as ncast-peer does for a download). The sender keeps within the controller's
// window, as a download session does. Time advances in fixed steps; everything is
// deterministic.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <deque>
#include <random>
#include <vector>

#include "server/rate_controller.hpp"

namespace ncast::server::test {

struct PathConfig {
  double rate = 100e6 / 8;                // octets per second through the bottleneck
  double queue = 64 * 1024;               // octets the bottleneck's queue holds
  double loss = 0;                        // random loss after the bottleneck
  std::chrono::microseconds delay{250};   // one way
  std::chrono::microseconds jitter{0};    // each packet's delay after the bottleneck varies by up to ± this (reorders)
  std::chrono::microseconds standing{0};  // a queue that other flows keep standing: every packet waits this more
  bool acks_lost = false;                 // the peer's ACKs do not arrive
};

struct PathTotals {
  std::uint64_t sent = 0, delivered = 0, queue_drops = 0;
  double max_queue_delay_s = 0;  // the longest a delivered packet waited in the queue
  double queue_delay_sum_s = 0;  // summed over delivered packets
};

class BottleneckSim {
 public:
  using Clock = RateController::Clock;
  using TimePoint = RateController::TimePoint;
  static constexpr double kDatagram = 1200;

  BottleneckSim(PathConfig path, RateController& cc, TimePoint start, std::uint64_t seed = 1)
      : path_(path), cc_(cc), now_(start), rng_(seed) {}

  // Runs for `span`; the path may be changed between runs. Returns the octets delivered meanwhile.
  double run(std::chrono::microseconds span) {
    const std::uint64_t before = totals_.delivered;
    const TimePoint end = now_ + span;
    while (now_ < end) step();
    return static_cast<double>(totals_.delivered - before) * kDatagram;
  }
  void set_path(const PathConfig& p) { path_ = p; }
  const PathTotals& totals() const { return totals_; }
  TimePoint now() const { return now_; }

 private:
  struct InFlight {
    std::uint64_t number;
    TimePoint arrives;
    double queued_s;
  };
  struct Ack {
    std::uint64_t largest;
    std::uint32_t received;
    std::chrono::microseconds delay;
    TimePoint arrives;
    RateController::Recent recent;
  };

  void step() {
    constexpr auto kStep = std::chrono::microseconds(20);
    now_ += kStep;
    send();
    deliver();
    while (!acks_.empty() && acks_.front().arrives <= now_) {
      const Ack a = acks_.front();
      acks_.pop_front();
      cc_.on_ack(a.largest, a.received, a.delay, now_, a.recent);
    }
    cc_.check_silence(now_, std::chrono::milliseconds(200));
    cc_.check_window(now_);
  }

  void send() {
    tokens_ = std::min(tokens_ + cc_.pacing_rate() * 20e-6, 4 * kDatagram);
    while (tokens_ >= kDatagram && cc_.window_open()) {
      tokens_ -= kDatagram;
      const std::uint64_t number = next_++;
      cc_.on_sent(number, static_cast<std::size_t>(kDatagram), now_);
      ++totals_.sent;
      // The queue holds what has not left the bottleneck yet.
      const double start = std::max(seconds(now_), link_free_s_);
      const double backlog = (start - seconds(now_)) * path_.rate;
      if (backlog + kDatagram > path_.queue) {
        ++totals_.queue_drops;
        continue;
      }
      link_free_s_ = start + kDatagram / path_.rate;
      const double queued = start - seconds(now_);
      if (std::bernoulli_distribution(path_.loss)(rng_)) continue;
      const auto jitter = std::chrono::microseconds(
          std::uniform_int_distribution<long long>(-path_.jitter.count(), path_.jitter.count())(rng_));
      const InFlight p{number, at(link_free_s_) + path_.standing + path_.delay + jitter, queued};
      // The wire in order of arrival: a packet held longer than those behind it arrives after them.
      wire_.insert(std::upper_bound(wire_.begin(), wire_.end(), p,
                                    [](const InFlight& a, const InFlight& b) { return a.arrives < b.arrives; }),
                   p);
    }
  }

  void deliver() {
    while (!wire_.empty() && wire_.front().arrives <= now_) {
      const InFlight p = wire_.front();
      wire_.pop_front();
      ++received_;
      ++totals_.delivered;
      totals_.max_queue_delay_s = std::max(totals_.max_queue_delay_s, p.queued_s);
      totals_.queue_delay_sum_s += p.queued_s;
      seen_[p.number % seen_.size()] = p.number;
      // How far packets overtake each other: the session learns it from losses it declared too early.
      if (p.number < largest_) reorder_ = std::max(reorder_, largest_ - p.number + 1);
      largest_ = std::max(largest_, p.number);
      largest_at_ = now_;
      if (++unacked_ == 1) ack_due_ = now_ + std::chrono::milliseconds(5);
      if (unacked_ >= 16) acknowledge();
    }
    if (unacked_ > 0 && now_ >= ack_due_) acknowledge();
  }

  void acknowledge() {
    const auto held = std::chrono::duration_cast<std::chrono::microseconds>(now_ - largest_at_);
    // The session's view of the packets just below the largest (its ACK history).
    const std::uint64_t span = std::min<std::uint64_t>({reorder_, largest_, kHistory});
    std::uint64_t arrived = 0;
    for (std::uint64_t n = largest_ - span + 1; n <= largest_ && span > 0; ++n) arrived += seen_[n % seen_.size()] == n;
    if (!path_.acks_lost) acks_.push_back({largest_, received_, held, now_ + path_.delay, {span, arrived}});
    unacked_ = 0;
  }

  double seconds(TimePoint t) const { return std::chrono::duration<double>(t - origin_).count(); }
  TimePoint at(double s) const {
    return origin_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
  }

  PathConfig path_;
  RateController& cc_;
  TimePoint now_;
  TimePoint origin_ = now_;
  std::mt19937_64 rng_;
  double tokens_ = 0, link_free_s_ = 0;
  static constexpr std::uint64_t kHistory = 1025;  // an ACK's largest and 16 words of history
  std::uint64_t next_ = 1, largest_ = 0, reorder_ = 3;
  std::vector<std::uint64_t> seen_ = std::vector<std::uint64_t>(4096, 0);  // by number, the packets received
  std::uint32_t received_ = 0, unacked_ = 0;
  TimePoint largest_at_{}, ack_due_{};
  std::deque<InFlight> wire_;
  std::deque<Ack> acks_;
  PathTotals totals_;
};

}  // namespace ncast::server::test
