// The replay window against a slow model: a set of every number accepted and the largest one.
#include "protocol/replay_window.hpp"

#include <gtest/gtest.h>

#include <random>
#include <set>

namespace ncast::proto {
namespace {

struct Model {
  std::set<std::uint64_t> seen;
  bool check(std::uint64_t x) const {
    if (seen.empty()) return true;
    const std::uint64_t h = *seen.rbegin();
    if (x <= h && h - x >= ReplayWindow::kSize) return false;
    return !seen.count(x);
  }
};

TEST(ReplayWindow, InOrderDuplicatesAndOld) {
  ReplayWindow w;
  EXPECT_TRUE(w.empty());
  for (std::uint64_t i = 0; i < 3000; ++i) {
    ASSERT_TRUE(w.check(i));
    w.accept(i);
    ASSERT_FALSE(w.check(i));
  }
  EXPECT_EQ(w.largest(), 2999u);
  EXPECT_FALSE(w.check(2999 - 1023));  // inside the window, seen
  EXPECT_FALSE(w.check(2999 - 1024));  // outside the window
  EXPECT_FALSE(w.check(0));
  EXPECT_TRUE(w.check(3000));
}

TEST(ReplayWindow, ReorderingWithinWindowAndJumps) {
  ReplayWindow w;
  w.accept(10);
  EXPECT_TRUE(w.check(5));
  w.accept(5);
  EXPECT_FALSE(w.check(5));
  w.accept(10 + 5000);  // jump clears everything
  EXPECT_FALSE(w.check(10));
  EXPECT_TRUE(w.check(5010 - 1023));
  EXPECT_FALSE(w.check(5010 - 1024));
  w.accept(5010 + 1023);  // jump by exactly window - 1: 5010 must stay seen
  EXPECT_FALSE(w.check(5010));
  EXPECT_TRUE(w.check(5011));
  w.accept(5010 + 1024);  // now 5010 falls out
  EXPECT_FALSE(w.check(5010));
}

TEST(ReplayWindow, AgreesWithModelOnRandomTraffic) {
  std::mt19937_64 rng(7);
  ReplayWindow w;
  Model m;
  std::uint64_t base = 0;
  for (int i = 0; i < 200000; ++i) {
    // Mostly forward with reordering, duplicates, old packets and occasional big jumps.
    const int r = static_cast<int>(rng() % 100);
    std::uint64_t x;
    if (r < 2) {
      base += 500 + rng() % 3000;
      x = base;
    } else if (r < 70) {
      x = base + rng() % 64;
      base += rng() % 4;
    } else {
      x = base > 2000 ? base - rng() % 2000 : rng() % (base + 1);
    }
    ASSERT_EQ(w.check(x), m.check(x)) << "at " << i << " x=" << x;
    if (m.check(x)) m.seen.insert(x);
    w.accept(x);
  }
}

TEST(ReplayWindow, AcceptIgnoresRejected) {
  ReplayWindow w;
  w.accept(5000);
  w.accept(1);  // too old: must not disturb anything
  EXPECT_EQ(w.largest(), 5000u);
  EXPECT_TRUE(w.check(4999));
}

TEST(ReplayWindow, HugeNumbers) {
  ReplayWindow w;
  const std::uint64_t top = ~std::uint64_t{0};
  w.accept(top - 1);
  EXPECT_TRUE(w.check(top));
  w.accept(top);
  EXPECT_FALSE(w.check(top));
  EXPECT_FALSE(w.check(top - 1));
  EXPECT_TRUE(w.check(top - 2));
}

}  // namespace
}  // namespace ncast::proto

namespace ncast::proto {
namespace {

// An ACK's history is the window read backwards from below its largest, against the model.
TEST(ReplayWindow, SeenBelowMatchesTheModel) {
  ReplayWindow w;
  Model m;
  std::mt19937_64 rng(7);
  std::uint64_t jumped = 0;
  for (std::uint64_t i = 0; i < 5000; ++i) {
    if (i % 700 == 699) jumped += 1 + rng() % 1500;    // a gap, at times longer than the window
    const std::uint64_t x = jumped + i + rng() % 300;  // late arrivals up to 300 behind
    if (rng() % 4 == 0 || !w.check(x)) continue;
    w.accept(x);
    m.seen.insert(x);
    const std::uint64_t largest = w.largest();
    for (std::size_t word = 0; word < 16; ++word)
      for (std::uint64_t bit = 0; bit < 64; ++bit) {
        const std::uint64_t back = 1 + 64 * word + bit;
        const bool expected = back <= largest && back < ReplayWindow::kSize && m.seen.count(largest - back);
        ASSERT_EQ((w.seen_below(word) >> bit & 1) != 0, expected) << "largest " << largest << " back " << back;
      }
  }
}

}  // namespace
}  // namespace ncast::proto
