// The scheduler's timer on its own: one expiry fires once and not before its time; ticking fires on
// every period until cancelled or set back to one expiry; setting what is set already changes nothing.
#include "server/pacing_ticker.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace ncast::server {
namespace {

using namespace std::chrono_literals;
using Clock = PacingTicker::Clock;

struct Fired {
  boost::asio::io_context io;
  std::vector<Clock::time_point> at;
  PacingTicker ticker{io, [this] { at.push_back(Clock::now()); }};
  void run_for(std::chrono::milliseconds d) {
    io.restart();
    io.run_for(d);
  }
};

TEST(PacingTicker, OneExpiryFiresOnceAtItsTime) {
  Fired f;
  const auto due = Clock::now() + 5ms;
  f.ticker.set(due);
  f.ticker.set(due);  // the same again: no second expiry
  EXPECT_FALSE(f.ticker.ticking());
  EXPECT_EQ(f.ticker.at(), due);
  f.run_for(40ms);
  ASSERT_EQ(f.at.size(), 1u);
  EXPECT_GE(f.at[0], due);
  EXPECT_EQ(f.ticker.at(), Clock::time_point::max());
}

TEST(PacingTicker, TicksUntilCancelled) {
  Fired f;
  f.ticker.set(Clock::now() + 1ms, 2ms);
  EXPECT_TRUE(f.ticker.ticking());
  f.run_for(60ms);
  // About 30 ticks; a busy machine merges overrun ones into one expiry, never adds any.
  EXPECT_GE(f.at.size(), 3u);
  EXPECT_LE(f.at.size(), 31u);
  f.ticker.cancel();
  const std::size_t ticks = f.at.size();
  f.run_for(20ms);
  EXPECT_EQ(f.at.size(), ticks);
}

TEST(PacingTicker, FromTickingBackToOneExpiry) {
  Fired f;
  f.ticker.set(Clock::now() + 1ms, 1ms);
  f.run_for(30ms);
  ASSERT_FALSE(f.at.empty());
  const std::size_t ticks = f.at.size();
  const auto due = Clock::now() + 15ms;
  f.ticker.set(due);
  f.run_for(40ms);
  ASSERT_GE(f.at.size(), ticks + 1);
  // At most one expiry of the ticking was read after the change (fired early, harmless); then one at due.
  EXPECT_LE(f.at.size(), ticks + 2);
  EXPECT_GE(f.at.back(), due);
}

TEST(PacingTicker, APastDeadlineFiresAtOnce) {
  Fired f;
  f.ticker.set(Clock::now() - 1s);
  f.run_for(20ms);
  EXPECT_EQ(f.at.size(), 1u);
}

}  // namespace
}  // namespace ncast::server
