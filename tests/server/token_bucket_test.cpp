#include "server/token_bucket.hpp"

#include <gtest/gtest.h>

#include <chrono>

namespace ncast::server {
namespace {

using namespace std::chrono_literals;

TEST(TokenBucket, RefillsAtItsRateUpToItsSize) {
  const auto t = TokenBucket::Clock::now();
  TokenBucket b(1000, 100, 0, t);
  EXPECT_FALSE(b.available(1));
  b.refill(t + 50ms);
  EXPECT_NEAR(b.tokens(), 50, 1e-9);
  b.refill(t + 1s);
  EXPECT_EQ(b.tokens(), 100) << "never more than its size";
  b.refill(t + 500ms);
  EXPECT_EQ(b.tokens(), 100) << "time going back adds nothing";
  EXPECT_TRUE(b.take(t + 1s, 100));
  EXPECT_FALSE(b.take(t + 1s, 1));
}

TEST(TokenBucket, NewLimitsApplyFromTheNextRefill) {
  const auto t = TokenBucket::Clock::now();
  TokenBucket b(1000, 100, 0, t);
  b.set_limits(2000, 10);
  EXPECT_EQ(b.tokens(), 0);
  b.refill(t + 2ms);
  EXPECT_NEAR(b.tokens(), 4, 1e-9) << "at the new rate";
  b.refill(t + 1s);
  EXPECT_EQ(b.tokens(), 10) << "within the new size";
  b.set_limits(2000, 5);
  b.refill(t + 1s);
  EXPECT_EQ(b.tokens(), 5) << "a smaller size caps what was held";
  b.spend(7);
  EXPECT_NEAR(b.tokens(), -2, 1e-9) << "a spend may overdraw; the debt is paid by refills";
}

}  // namespace
}  // namespace ncast::server
