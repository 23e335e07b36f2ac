// The swarm's loss processes: their long-run statistics against the closed forms of the parameters
// given (computed here from the spec text, not by LossSpec), and the parser's refusals.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <thread>
#include <vector>

#include "peer/swarm/loss_model.hpp"

namespace ncast::swarm {
namespace {

struct Observed {
  double loss = 0;        // fraction lost
  double after_loss = 0;  // P(lost | the previous one was lost)
  double mean_run = 0;    // mean length of runs of consecutive losses
};

Observed observe(const LossSpec& spec, std::uint64_t seed, std::size_t draws) {
  LossProcess p(spec, seed);
  std::size_t lost = 0, pairs = 0, both = 0, runs = 0;
  bool previous = false;
  for (std::size_t i = 0; i < draws; ++i) {
    const bool l = p.drop();
    lost += l;
    if (previous) {
      ++pairs;
      both += l;
    }
    if (l && !previous) ++runs;
    previous = l;
  }
  Observed o;
  o.loss = static_cast<double>(lost) / static_cast<double>(draws);
  o.after_loss = pairs ? static_cast<double>(both) / static_cast<double>(pairs) : 0;
  o.mean_run = runs ? static_cast<double>(lost) / static_cast<double>(runs) : 0;
  return o;
}

TEST(LossModel, BernoulliLosesItsRateIndependently) {
  for (const double p : {0.05, 0.3}) {
    const std::size_t draws = 400000;
    const auto o = observe(parse_loss("bernoulli:" + std::to_string(p)), 11, draws);
    const double sigma = std::sqrt(p * (1 - p) / static_cast<double>(draws));
    EXPECT_NEAR(o.loss, p, 5 * sigma) << p;
    // Memoryless: a loss says nothing about the next one.
    EXPECT_NEAR(o.after_loss, p, 0.01) << p;
    EXPECT_NEAR(o.mean_run, 1 / (1 - p), 0.02 * (1 / (1 - p))) << p;
  }
}

TEST(LossModel, BurstModelHasItsMeanLossAndBurstLength) {
  // burst:P:LEN — stationary loss P, losses in runs of mean LEN (bad state lasts geometric(1/LEN)).
  for (const auto& [p, len] : {std::pair{0.1, 4.0}, std::pair{0.3, 10.0}}) {
    const std::size_t draws = 2000000;
    const auto o = observe(parse_loss("burst:" + std::to_string(p) + ":" + std::to_string(len)), 5, draws);
    // Runs are correlated: allow 3 % of the rate (the standard error is well under 1 %).
    EXPECT_NEAR(o.loss, p, 0.03 * p) << p << " " << len;
    EXPECT_NEAR(o.mean_run, len, 0.03 * len) << p << " " << len;
    EXPECT_NEAR(o.after_loss, 1 - 1 / len, 0.01) << p << " " << len;
  }
}

TEST(LossModel, GeneralGilbertElliottStationaryLoss) {
  // Good state loses 1 %, bad state 60 %; P(good→bad) = 0.02, P(bad→good) = 0.18: P(bad) = 0.1.
  const LossSpec spec = parse_loss("ge:0.02:0.18:0.01:0.6");
  const double expected = 0.1 * 0.6 + 0.9 * 0.01;
  EXPECT_NEAR(spec.mean_loss(), expected, 1e-12);
  EXPECT_NEAR(spec.mean_burst(), 1 / 0.18, 1e-12);
  const auto o = observe(spec, 3, 2000000);
  EXPECT_NEAR(o.loss, expected, 0.03 * expected);
}

// Datagrams spaced `gap` apart through a burst:0.2:5 chain with a 10 ms slot.
Observed observe_spaced(std::chrono::milliseconds gap, std::size_t draws) {
  LossProcess p(parse_loss("burst:0.2:5"), 21, std::chrono::milliseconds(10));
  auto t = LossProcess::Clock::time_point{} + std::chrono::hours(1);
  std::size_t lost = 0, pairs = 0, both = 0;
  bool previous = false;
  for (std::size_t i = 0; i < draws; ++i) {
    t += gap;
    const bool l = p.drop(t);
    lost += l;
    if (previous) {
      ++pairs;
      both += l;
    }
    previous = l;
  }
  return {static_cast<double>(lost) / static_cast<double>(draws),
          pairs ? static_cast<double>(both) / static_cast<double>(pairs) : 0, 0};
}

TEST(LossModel, SilenceMovesABurstyChainOnByItsSlots) {
  // Closer than a slot: the per-datagram chain (a loss is followed by another with 1 − 1/5).
  const auto dense = observe_spaced(std::chrono::milliseconds(3), 400000);
  EXPECT_NEAR(dense.loss, 0.2, 0.01);
  EXPECT_NEAR(dense.after_loss, 0.8, 0.01);
  // Two slots apart: two steps, P(bad | bad) = π + (1 − π)·λ² with π = 0.2, λ = 1 − 0.05 − 0.2.
  const auto two = observe_spaced(std::chrono::milliseconds(20), 400000);
  EXPECT_NEAR(two.loss, 0.2, 0.01);
  EXPECT_NEAR(two.after_loss, 0.2 + 0.8 * 0.75 * 0.75, 0.01);
  // A second apart (100 slots): the state is forgotten, losses are independent at the mean rate.
  const auto sparse = observe_spaced(std::chrono::seconds(1), 400000);
  EXPECT_NEAR(sparse.loss, 0.2, 0.01);
  EXPECT_NEAR(sparse.after_loss, 0.2, 0.01);
}

TEST(LossModel, NoneNeverLoses) {
  const auto o = observe(parse_loss("none"), 1, 10000);
  EXPECT_EQ(o.loss, 0.0);
}

TEST(LossModel, SameSeedSameLosses) {
  LossProcess a(parse_loss("burst:0.2:3"), 42), b(parse_loss("burst:0.2:3"), 42), c(parse_loss("burst:0.2:3"), 43);
  int same = 0, differ = 0;
  for (int i = 0; i < 10000; ++i) {
    const bool x = a.drop(), y = b.drop(), z = c.drop();
    same += x == y;
    differ += x != z;
  }
  EXPECT_EQ(same, 10000);
  EXPECT_GT(differ, 0);
}

TEST(LossModel, SharedProcessIsOneProcessAcrossThreads) {
  // Four threads stepping one shared process see together the process's rate.
  SharedLoss shared(parse_loss("bernoulli:0.25"), 9);
  std::vector<std::thread> threads;
  std::vector<std::size_t> lost(4, 0);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50000; ++i) lost[t] += shared.drop(LossProcess::Clock::now());
    });
  for (auto& t : threads) t.join();
  const double rate = static_cast<double>(lost[0] + lost[1] + lost[2] + lost[3]) / 200000.0;
  EXPECT_NEAR(rate, 0.25, 5 * std::sqrt(0.25 * 0.75 / 200000.0));
}

TEST(LossModel, RefusesBadSpecs) {
  for (const char* bad :
       {"bernoulli", "bernoulli:1", "bernoulli:-0.1", "bernoulli:x", "burst:0.1", "burst:0.1:0.5", "burst:0.9:1",
        "ge:0.1:0:0:1", "ge:1:1:1:1", "ge:0.1:0.1:0:2", "gauss:0.1", "none:1", "bernoulli:0.1:2"})
    EXPECT_THROW(parse_loss(bad), std::invalid_argument) << bad;
}

}  // namespace
}  // namespace ncast::swarm
