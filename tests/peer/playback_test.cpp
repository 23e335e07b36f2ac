// The model player of the swarm: late segments and stall time against timelines worked out by hand.
#include <gtest/gtest.h>

#include "peer/swarm/playback.hpp"

namespace ncast::swarm {
namespace {

using namespace std::chrono_literals;
using Clock = Playback::Clock;

// 8000 bit/s: a 1000-octet segment plays for exactly one second.
constexpr double kBitrate = 8000;

TEST(Playback, OnTimeSegmentsAreNotLate) {
  Playback p(kBitrate, 500ms);
  const auto t0 = Clock::now();
  // Playback starts at 0.5 s; segment i is due at 0.5 + i s. Each arrives 0.1 s early.
  for (int i = 0; i < 10; ++i) p.segment_written(1000, t0 + std::chrono::milliseconds(i == 0 ? 0 : 400 + 1000 * i));
  EXPECT_EQ(p.segments(), 10u);
  EXPECT_EQ(p.late(), 0u);
  EXPECT_EQ(p.stall_seconds(), 0.0);
  EXPECT_FALSE(p.first_late_at());
  ASSERT_TRUE(p.least_slack_s());
  EXPECT_NEAR(*p.least_slack_s(), 0.1, 1e-6);
}

TEST(Playback, ALateSegmentStallsOnceAndShiftsTheRest) {
  Playback p(kBitrate, 0ms);
  const auto t0 = Clock::now();
  p.segment_written(1000, t0);           // plays 0..1
  p.segment_written(1000, t0 + 1500ms);  // due at 1: late by 0.5, plays 1.5..2.5
  p.segment_written(1000, t0 + 2400ms);  // due at 2.5: on time
  p.segment_written(500, t0 + 3500ms);   // due at 3.5: exactly on time
  p.segment_written(1000, t0 + 4200ms);  // due at 3.5 + 0.5 = 4: late by 0.2
  EXPECT_EQ(p.late(), 2u);
  EXPECT_NEAR(p.stall_seconds(), 0.7, 1e-6);
  EXPECT_EQ(p.first_late_at(), t0 + 1500ms);
  ASSERT_TRUE(p.least_slack_s());
  EXPECT_NEAR(*p.least_slack_s(), -0.5, 1e-6);
}

TEST(Playback, ALiveSegmentMadeAfterItWasDueIsLateOnlyFromWhenItWasMade) {
  Playback p(kBitrate, 0ms);
  const auto t0 = Clock::now();
  p.segment_written(1000, t0, t0);                    // plays 0..1
  p.segment_written(1000, t0 + 2000ms, t0 + 2000ms);  // due at 1, made and written at 2: no stall
  p.segment_written(1000, t0 + 3500ms, t0 + 2500ms);  // made at 2.5, due at 3: late by 0.5
  EXPECT_EQ(p.late(), 1u);
  EXPECT_NEAR(p.stall_seconds(), 0.5, 1e-6);
}

TEST(Playback, UnknownBitrateIsNeverLate) {
  Playback p(0, 0ms);
  const auto t0 = Clock::now();
  for (int i = 0; i < 5; ++i) p.segment_written(1000, t0 + std::chrono::seconds(10 * i));
  EXPECT_EQ(p.late(), 0u);
  EXPECT_EQ(p.segments(), 5u);
  EXPECT_FALSE(p.least_slack_s());
}

}  // namespace
}  // namespace ncast::swarm
