#pragma once
// Simulated loss of the datagrams arriving at a peer: independent (Bernoulli) or in bursts
// (Gilbert–Elliott: a two-state Markov chain stepped once per datagram, each state losing with its
// own probability). A process is per peer, or shared by every peer of a swarm: one bottleneck whose
// bursts hit everyone at once.
#include <chrono>
#include <cstdint>
#include <mutex>
#include <random>
#include <string>

namespace ncast::swarm {

struct LossSpec {
  enum class Kind : std::uint8_t { none, bernoulli, gilbert_elliott };
  Kind kind = Kind::none;
  double p = 0;            // Bernoulli: the loss probability
  double good_to_bad = 0;  // Gilbert–Elliott transition probabilities, per datagram
  double bad_to_good = 1;
  double loss_good = 0;  // loss probability in each state
  double loss_bad = 1;

  // The stationary loss rate, and the mean number of consecutive datagrams spent in the bad state.
  double mean_loss() const;
  double mean_burst() const;
  std::string describe() const;
};

// "none", "bernoulli:P", "burst:P:LEN" (Gilbert–Elliott losing everything in the bad state and
// nothing in the good one, stationary loss P, mean burst length LEN datagrams) or
// "ge:P_GB:P_BG:LOSS_GOOD:LOSS_BAD". Throws std::invalid_argument with a message for the user.
LossSpec parse_loss(const std::string& text);

// One loss process. Not thread-safe: one per peer, or wrapped in SharedLoss.
//
// The Gilbert–Elliott chain moves one step per datagram, as in packet traces. A channel's state also
// changes while nothing crosses it, though: with a slot given, a datagram arriving after a silence of
// k slots (k > 1) moves the chain k steps at once (the k-step transition of the two-state chain, in
// closed form). So a handshake retried after a second of silence does not meet the same burst again,
// while datagrams closer than a slot see the classical per-datagram chain.
class LossProcess {
 public:
  using Clock = std::chrono::steady_clock;
  LossProcess(const LossSpec& spec, std::uint64_t seed, Clock::duration slot = Clock::duration::zero());
  // One datagram: true if it is lost.
  bool drop();
  // One datagram arriving at `now` (the chain first catches up with the silence before it).
  bool drop(Clock::time_point now);
  bool bad() const { return bad_; }

 private:
  void advance(double steps);

  LossSpec spec_;
  std::mt19937_64 rng_;
  std::uniform_real_distribution<double> u_{0.0, 1.0};
  bool bad_ = false;
  Clock::duration slot_;
  Clock::time_point last_{};
  bool seen_ = false;
};

// A process shared by peers on several threads.
class SharedLoss {
 public:
  SharedLoss(const LossSpec& spec, std::uint64_t seed, LossProcess::Clock::duration slot = {})
      : process_(spec, seed, slot) {}
  bool drop(LossProcess::Clock::time_point now) {
    std::lock_guard lock(mutex_);
    return process_.drop(now);
  }

 private:
  std::mutex mutex_;
  LossProcess process_;
};

}  // namespace ncast::swarm
