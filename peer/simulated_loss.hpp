#pragma once
// ncast-peer --loss: arriving datagrams dropped at random, as a lossy path would, for testing.
#include <algorithm>
#include <cstdint>
#include <random>

namespace ncast::peer {

class SimulatedLoss {
 public:
  // seed 0: a random seed.
  SimulatedLoss(double fraction, std::uint64_t seed)
      : rng_(seed ? seed : std::random_device{}()), loss_(std::clamp(fraction, 0.0, 1.0)) {}

  // Whether to drop the datagram that just arrived (and count it).
  bool drop() {
    if (!loss_(rng_)) return false;
    ++dropped_;
    return true;
  }
  std::uint64_t dropped() const { return dropped_; }

 private:
  std::mt19937_64 rng_;
  std::bernoulli_distribution loss_;
  std::uint64_t dropped_ = 0;
};

}  // namespace ncast::peer
