#include "server/rate_controller.hpp"

#include <gtest/gtest.h>

#include <cstdio>

#include "tests/server/bottleneck_sim.hpp"

namespace ncast::server {
namespace {

using namespace std::chrono_literals;
using test::BottleneckSim;
using test::PathConfig;

RateControllerConfig config(double max_rate = 1e9 / 8) {
  RateControllerConfig c;
  c.initial_rate = 10e6 / 8;
  c.max_rate = max_rate;
  c.datagram = BottleneckSim::kDatagram;
  return c;
}

struct Window {
  double rate = 0;         // octets per second delivered
  double queue_delay = 0;  // mean seconds a delivered packet queued
  double drops = 0;        // queue drops per packet sent
};

// Runs `span` more and describes it.
Window measure(BottleneckSim& sim, const RateController& cc, std::chrono::microseconds span) {
  const auto before = sim.totals();
  const double got = sim.run(span);
  const auto& after = sim.totals();
  Window w;
  w.rate = got / std::chrono::duration<double>(span).count();
  const auto delivered = static_cast<double>(after.delivered - before.delivered);
  w.queue_delay = delivered > 0 ? (after.queue_delay_sum_s - before.queue_delay_sum_s) / delivered : 0;
  const auto sent = static_cast<double>(after.sent - before.sent);
  w.drops = sent > 0 ? static_cast<double>(after.queue_drops - before.queue_drops) / sent : 0;
  std::printf(
      "delivered %.1f Mbit/s, queue delay %.2f ms, queue drops %.2f %%; controller: random loss %.3f, "
      "min RTT %.2f ms, congestion events %llu, bw %.1f Mbit/s\n",
      w.rate * 8e-6, w.queue_delay * 1e3, w.drops * 100, cc.random_loss(),
      std::chrono::duration<double>(cc.min_rtt()).count() * 1e3,
      static_cast<unsigned long long>(cc.congestion_events()), cc.delivery_rate() * 8e-6);
  return w;
}

TEST(RateController, ConvergesToTheBottleneckRate) {
  const auto t0 = RateController::Clock::now();
  RateController cc(config(), t0);
  PathConfig path;
  path.rate = 20e6 / 8;
  BottleneckSim sim(path, cc, t0);
  sim.run(1s);
  const Window w = measure(sim, cc, 3s);
  EXPECT_GT(w.rate, 0.9 * path.rate);
  // Not a standing full queue (26 ms at this rate): the gain cycle drains what it builds.
  EXPECT_LT(w.queue_delay, 0.01);
  EXPECT_LT(w.drops, 0.02);
  EXPECT_FALSE(cc.window_mode()) << "the queues of its own probes are drained, not taken for others'";
}

TEST(RateController, HoldsItsRateThroughRandomLossWithoutAQueue) {
  const auto t0 = RateController::Clock::now();
  RateController cc(config(), t0);
  PathConfig path;
  path.loss = 0.1;
  BottleneckSim sim(path, cc, t0, 7);
  sim.run(1s);
  const Window w = measure(sim, cc, 3s);
  // The acceptance figure: 0.85 of what the lossy path can deliver.
  EXPECT_GT(w.rate, 0.85 * 0.9 * path.rate);
  EXPECT_NEAR(cc.random_loss(), 0.1, 0.03);
  // No standing full queue (5.2 ms), and few of its drops: the loss made up for is the random loss.
  EXPECT_LT(w.queue_delay, 0.5 * path.queue / path.rate);
  EXPECT_LT(w.drops, 0.03);
}

// 10 ms each way, each packet's delay varying by ± 5 ms (the bed's reorder case): packets overtake each
// other by up to 10 ms, so an ACK's largest runs ahead of the packets it counts. That is no loss.
TEST(RateController, ReorderingIsNotCongestion) {
  const auto t0 = RateController::Clock::now();
  RateController cc(config(), t0);
  PathConfig path;
  path.rate = 50e6 / 8;
  path.queue = 250'000;
  path.delay = 10ms;
  path.jitter = 5ms;
  BottleneckSim sim(path, cc, t0, 3);
  // Startup's first rounds count with the initial span (3 packets) until reordering shows deeper: the
  // cut that their overtaken packets caused is taken back (without: 37.6 Mbit/s in this first second).
  const Window start = measure(sim, cc, 1s);
  EXPECT_GT(start.rate, 0.8 * path.rate);
  EXPECT_GE(cc.undone_cuts(), 1u);
  sim.run(1s);
  const Window w = measure(sim, cc, 3s);
  // Counted as loss, the overtaken packets made a few per cent of random loss and a congestion event
  // every 80 ms: 12 Mbit/s. What is left of the jitter's cost is the queue the noisier rate samples build.
  EXPECT_GT(w.rate, 0.85 * path.rate);
  EXPECT_LT(cc.random_loss(), 0.005);
}

// Startup through 10 % random loss, from a session's 20 Mbit/s: the random loss known after a round or
// two rests on a few dozen packets, and a round that lost a little more by chance must not pass for
// congestion. Before, it did in a third of the starts, which then left startup at a third of the link
// and climbed back through the gain cycle for 400 ms (the bed's randomloss case).
TEST(RateController, StartupThroughRandomLossReachesTheLinkWithoutCongestion) {
  int slow = 0;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    const auto t0 = RateController::Clock::now();
    RateControllerConfig c = config(100e6 / 8);  // the session's cap, the bed's link
    c.initial_rate = 20e6 / 8;
    RateController cc(c, t0);
    PathConfig path;
    path.loss = 0.1;
    path.queue = 250e3;  // the bed's
    BottleneckSim sim(path, cc, t0, seed);
    const double got = sim.run(300ms);
    std::printf("seed %llu: %.1f Mbit/s in the first 300 ms, congestion events %llu\n",
                static_cast<unsigned long long>(seed), got / 0.3 * 8e-6,
                static_cast<unsigned long long>(cc.congestion_events()));
    slow += got / 0.3 < 0.75 * (1 - path.loss) * path.rate;
  }
  EXPECT_LE(slow, 1) << "starts of 20 below 0.75 of the lossy link over their first 300 ms";
}

TEST(RateController, BacksOffWhenTheRttGrowsWithItsRate) {
  // A deep buffer (0.8 s at this rate) and no loss at all: only the RTT says the rate is too high.
  const auto t0 = RateController::Clock::now();
  RateController cc(config(), t0);
  PathConfig path;
  path.rate = 20e6 / 8;
  path.queue = 2e6;
  BottleneckSim sim(path, cc, t0, 3);
  sim.run(1s);
  const Window w = measure(sim, cc, 3s);
  EXPECT_GT(w.rate, 0.85 * path.rate);
  EXPECT_LT(w.queue_delay, 0.02);
  EXPECT_EQ(sim.totals().queue_drops, 0u);
}

TEST(RateController, FollowsTheBottleneckDown) {
  const auto t0 = RateController::Clock::now();
  RateController cc(config(), t0);
  PathConfig path;
  BottleneckSim sim(path, cc, t0, 5);
  sim.run(2s);
  path.rate = 10e6 / 8;
  sim.set_path(path);
  sim.run(1s);
  const Window w = measure(sim, cc, 2s);
  EXPECT_GT(w.rate, 0.85 * path.rate);
  EXPECT_LT(w.drops, 0.02);  // it sends at the new rate, not into a full queue
}

TEST(RateController, StaysUnderItsCap) {
  const auto t0 = RateController::Clock::now();
  RateController cc(config(5e6 / 8), t0);
  BottleneckSim sim(PathConfig{}, cc, t0);
  const Window w = measure(sim, cc, 2s);
  EXPECT_LE(cc.pacing_rate(), 5e6 / 8);
  EXPECT_GT(w.rate, 0.9 * 5e6 / 8);
}

// A session on 20 Mbit/s with a queue of 250 kB: alone for 2 s (a rate flow), then for 1 s behind a queue
// that others keep standing at 10 ms (`others`).
struct BehindOthersQueue {
  explicit BehindOthersQueue(std::uint64_t seed) : sim(path, cc, t0, seed) {
    sim.run(2s);
    EXPECT_GT(cc.congestion_events(), 0u) << "startup overran the bottleneck: the mode needs a congestion seen";
    EXPECT_FALSE(cc.window_mode());
    others.standing = 10ms;
    sim.set_path(others);
    sim.run(1s);
  }
  static PathConfig alone() {
    PathConfig p;
    p.rate = 20e6 / 8;
    p.queue = 250e3;
    return p;
  }
  RateController::TimePoint t0 = RateController::Clock::now();
  RateController cc{config(), t0};
  PathConfig path = alone();
  BottleneckSim sim;
  PathConfig others = alone();
};

// A queue that other flows keep standing (TCP's, in the bed's fairness case) does not drain in the rounds
// below the rate: the controller becomes a window flow there, ACK-clocked as TCP is. When the others'
// queue goes, the session alone gets the link again (its window may keep a queue of its own, as TCP's does:
// it leaves the mode only once four rounds in a row find none).
TEST(RateController, InAQueueOthersKeepStandingItIsAckClocked) {
  BehindOthersQueue q(11);
  ASSERT_TRUE(q.cc.window_mode());
  const double window = q.cc.window();
  EXPECT_GT(window, 0);

  // The ACKs stop: a window flow sends its window and then one tail probe per quiet spell (two RTTs,
  // 20 ms at least), where a rate would go on for the 100 ms at its rate.
  q.others.acks_lost = true;
  q.sim.set_path(q.others);
  const auto sent = q.sim.totals().sent;
  q.sim.run(100ms);
  const auto during = q.sim.totals().sent - sent;
  EXPECT_LE(static_cast<double>(during), (window + 16 * BottleneckSim::kDatagram) / BottleneckSim::kDatagram + 6)
      << "window " << window / BottleneckSim::kDatagram << " datagrams";
  EXPECT_GE(during, 1u);
  EXPECT_LT(static_cast<double>(during), 0.5 * 0.1 * q.cc.pacing_rate() / BottleneckSim::kDatagram);
  q.others.acks_lost = false;
  q.sim.set_path(q.others);
  const Window shared = measure(q.sim, q.cc, 1s);
  EXPECT_GT(shared.rate, 0.5 * q.path.rate) << "alone behind the standing queue, the window grows back";

  q.sim.set_path(q.path);
  q.sim.run(1s);
  const Window alone = measure(q.sim, q.cc, 2s);
  EXPECT_GT(alone.rate, 0.85 * q.path.rate);
}

// Others' queue is not steady: it swings as their windows grow and are cut, and it may drain for a moment
// when they cut together. A window flow takes a round near the top of the swing as a congestion event (a
// window flow beside lost a datagram there), judged against the swing it has seen, not against the empty
// path: a queue others keep standing that varies by a millisecond or two is not a full one. A moment
// without a queue does not end the mode either (it would restart the window from the rate).
TEST(RateController, InAQueueOthersKeepItCutsOnlyNearTheTopOfTheSwing) {
  BehindOthersQueue q(13);
  ASSERT_TRUE(q.cc.window_mode());
  EXPECT_EQ(q.cc.window_entries(), 1u);

  // Standing 10 ms, swinging by ±1.5 ms every 200 ms, and for 8 ms once a second no queue at all.
  const auto events = q.cc.congestion_events();
  const auto delivered = q.sim.totals().delivered;
  int samples_out = 0;
  for (int ms = 0; ms < 3000; ms += 4) {
    const int phase = ms % 200;
    q.others.standing = std::chrono::microseconds(8500 + 30 * (phase < 100 ? phase : 200 - phase));
    if (ms % 1000 >= 500 && ms % 1000 < 508) q.others.standing = 0ms;
    q.sim.set_path(q.others);
    q.sim.run(4ms);
    samples_out += q.cc.window_mode() ? 0 : 1;
  }
  const double rate = static_cast<double>(q.sim.totals().delivered - delivered) * BottleneckSim::kDatagram / 3.0;
  std::printf("swinging 10 +- 1.5 ms: %.1f Mbit/s, %llu congestion events, %d samples out of the window mode\n",
              rate * 8e-6, static_cast<unsigned long long>(q.cc.congestion_events() - events), samples_out);
  EXPECT_EQ(samples_out, 0);
  EXPECT_EQ(q.cc.window_entries(), 1u);
  EXPECT_GT(rate, 0.85 * q.path.rate);

  // A swing as TCP's sawtooth makes it, from 2 to 18 ms over 400 ms and back at once: a cut near each top.
  const auto before = q.cc.congestion_events();
  for (int ms = 0; ms < 4000; ms += 4) {
    q.others.standing = std::chrono::microseconds(2000 + 40 * (ms % 400));
    q.sim.set_path(q.others);
    q.sim.run(4ms);
  }
  const auto cuts = q.cc.congestion_events() - before;
  std::printf("swinging 2-18 ms: %llu congestion events in 10 swings\n", static_cast<unsigned long long>(cuts));
  EXPECT_GE(cuts, 8u);
  EXPECT_LE(cuts, 40u);
}

TEST(RateController, ProbesIntoABlackholeAndResumesWhenAcksReturn) {
  const auto t0 = RateController::Clock::now();
  RateController cc(config(), t0);
  PathConfig path;
  BottleneckSim sim(path, cc, t0, 9);
  sim.run(2s);
  PathConfig hole = path;
  hole.loss = 1;
  sim.set_path(hole);
  sim.run(1s);
  EXPECT_TRUE(cc.silent());
  EXPECT_EQ(cc.silences(), 1u);
  const auto sent = sim.totals().sent;
  sim.run(1s);
  // A second of silence costs at most the probe rate's worth of datagrams.
  EXPECT_LE(sim.totals().sent - sent, static_cast<std::uint64_t>(config().min_rate / BottleneckSim::kDatagram) + 2);
  sim.set_path(path);
  sim.run(100ms);
  EXPECT_FALSE(cc.silent());
  const Window w = measure(sim, cc, 1s);
  EXPECT_GT(w.rate, 0.85 * path.rate);  // the model was kept: no new startup from scratch
}

TEST(RateController, KeepsTheSendTimesOfAWholeLongFatFlight) {
  // 400 Mbit/s over 40 ms: 1,700 datagrams in flight, where a paced stream has a few dozen. The send
  // times start in a small ring that must grow, or ACKs name packets whose times are gone.
  const auto t0 = RateController::Clock::now();
  RateController cc(config(), t0);
  PathConfig path;
  path.rate = 400e6 / 8;
  path.delay = 20ms;
  path.queue = 4 << 20;
  BottleneckSim sim(path, cc, t0, 11);
  sim.run(3s);
  const Window w = measure(sim, cc, 2s);
  // Its rate and RTT samples come from those send times.
  EXPECT_GT(w.rate, 0.5 * path.rate);
  EXPECT_NEAR(cc.delivery_rate(), w.rate, 0.05 * w.rate);
  EXPECT_GE(cc.min_rtt(), 40ms);
  EXPECT_LT(cc.min_rtt(), 41ms);
}

}  // namespace
}  // namespace ncast::server
