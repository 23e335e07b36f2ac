// PacingGrid: wake-ups rounded up to the grid; the period grows from the finest, in whole multiples and
// up to kMaxPacingGrid, only while every session that took a turn bursts less often and a period carries
// at most kGridDatagrams; it is made finer at once for a session that bursts more often; a per-session
// timing is kept as it is.
#include "server/pacing_grid.hpp"

#include <gtest/gtest.h>

namespace ncast::server {
namespace {

using namespace std::chrono_literals;

using TimePoint = PacingGrid::TimePoint;
const TimePoint kOrigin = TimePoint{} + 1h;

TEST(PacingGrid, RoundsUpToItsPoints) {
  PacingGrid grid(kOrigin, 1ms);
  EXPECT_EQ(grid.round_up(kOrigin), kOrigin);
  EXPECT_EQ(grid.round_up(kOrigin + 1ns), kOrigin + 1ms);
  EXPECT_EQ(grid.round_up(kOrigin + 1ms), kOrigin + 1ms);
  EXPECT_EQ(grid.round_up(kOrigin + 2500us), kOrigin + 3ms);
  EXPECT_EQ(grid.round_up(kOrigin - 5ms), kOrigin - 5ms);  // before the origin: as it is
}

TEST(PacingGrid, GrowsWhileEverySessionBurstsLessOftenAndAPeriodCarriesFewDatagrams) {
  PacingGrid grid(kOrigin, 1ms);
  // Realtime sessions bursting every 200 ms, 50,000 datagrams a second (500 peers at 768 kbit/s): the
  // coarsest grid.
  grid.note_interval(200ms);
  EXPECT_TRUE(grid.adjust(kOrigin + 100ms, 5'000));
  EXPECT_EQ(grid.period(), kMaxPacingGrid);
  EXPECT_TRUE(grid.ticks());
  EXPECT_EQ(grid.round_up(kOrigin + 1ms), kOrigin + 4ms);
  // Four times the datagrams: a period of 4 ms would carry 800, beyond kGridDatagrams: 1 ms (200).
  grid.note_interval(200ms);
  EXPECT_TRUE(grid.adjust(kOrigin + 200ms, 5'000 + 20'000));
  EXPECT_EQ(grid.period(), 1ms);
  // 3,000 datagrams in 100 ms: 8.5 ms carry 256, so the grid may grow to kMaxPacingGrid again.
  grid.note_interval(200ms);
  EXPECT_TRUE(grid.adjust(kOrigin + 300ms, 25'000 + 3'000));
  EXPECT_EQ(grid.period(), 4ms);
  // A session bursts every 2.5 ms: 2 ms at once, and so it stays (5,000 datagrams in 100 ms would allow
  // 5.12 ms).
  EXPECT_TRUE(grid.note_interval(2500us));
  EXPECT_EQ(grid.period(), 2ms);
  EXPECT_FALSE(grid.adjust(kOrigin + 400ms, 28'000 + 5'000));
  EXPECT_EQ(grid.period(), 2ms);
  // Nothing changes: no change reported.
  grid.note_interval(2500us);
  EXPECT_FALSE(grid.adjust(kOrigin + 500ms, 33'000 + 5'000));
  EXPECT_EQ(grid.period(), 2ms);
}

TEST(PacingGrid, ASessionBurstingMoreOftenMakesItFinerAtOnce) {
  PacingGrid grid(kOrigin, 1ms);
  grid.adjust(kOrigin + 100ms, 100);
  ASSERT_EQ(grid.period(), kMaxPacingGrid);
  EXPECT_FALSE(grid.note_interval(10ms));
  EXPECT_TRUE(grid.note_interval(2900us));  // a download at its controller's rate
  EXPECT_EQ(grid.period(), 2ms);
  EXPECT_TRUE(grid.note_interval(300us));
  EXPECT_EQ(grid.period(), 1ms);  // never finer than the finest
  EXPECT_FALSE(grid.note_interval(100us));
  // The next adjustment remembers it: the grid stays fine while that session takes turns.
  EXPECT_FALSE(grid.adjust(kOrigin + 200ms, 200));
  EXPECT_EQ(grid.period(), 1ms);
  // It went away: the grid grows again.
  EXPECT_TRUE(grid.adjust(kOrigin + 300ms, 300));
  EXPECT_EQ(grid.period(), kMaxPacingGrid);
}

TEST(PacingGrid, PerSessionTimingAndCoarseSettingsStayAsTheyAre) {
  PacingGrid per_session(kOrigin, 1us);
  per_session.note_interval(200ms);
  EXPECT_FALSE(per_session.adjust(kOrigin + 100ms, 10));
  EXPECT_EQ(per_session.period(), 1us);
  EXPECT_FALSE(per_session.ticks());
  PacingGrid coarse(kOrigin, 10ms);
  coarse.note_interval(200ms);
  EXPECT_FALSE(coarse.adjust(kOrigin + 100ms, 10));
  EXPECT_EQ(coarse.period(), 10ms);
  EXPECT_FALSE(coarse.note_interval(1ms));  // never finer than asked for
  EXPECT_EQ(coarse.period(), 10ms);
}

}  // namespace
}  // namespace ncast::server
