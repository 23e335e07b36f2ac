#include "server/shared_path.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace ncast::server {
namespace {

using namespace std::chrono_literals;
using TimePoint = std::chrono::steady_clock::time_point;

// `n` sessions of one path, slot i joined i ms after the first, each needing 100 kB/s; the path carried
// `carried_each` of each, and the first `short_count` of them (by slot) are short by their breakers.
std::vector<PathMember> path(std::uint32_t n, double carried_each, std::uint32_t short_count) {
  std::vector<PathMember> members;
  for (std::uint32_t i = 0; i < n; ++i)
    members.push_back({i, TimePoint{} + std::chrono::milliseconds(i), true, i < short_count, carried_each, 100e3});
  return members;
}

TEST(SharedPath, AFullPathKeepsItsOldestSessionsAsManyAsItCarries) {
  // 200 sessions through a path that carries 60 streams: each got 30 kB/s of its 100.
  auto members = path(200, 30e3, 200);
  std::reverse(members.begin(), members.end());  // the order they are listed in does not matter
  auto beyond = beyond_shared_path(members);
  std::sort(beyond.begin(), beyond.end());
  ASSERT_EQ(beyond.size(), 140u);
  EXPECT_EQ(beyond.front(), 60u);  // the 60 oldest (slots 0-59) keep their streams
  EXPECT_EQ(beyond.back(), 199u);
}

TEST(SharedPath, APathThatCarriesEveryStreamEndsNone) {
  // Random loss made up for: every session carried what it needs, whatever its breaker said once.
  EXPECT_TRUE(beyond_shared_path(path(50, 100e3, 0)).empty());
  // Short by their breakers, yet the window carried all of them: the path has room again.
  EXPECT_TRUE(beyond_shared_path(path(50, 100e3, 50)).empty());
}

TEST(SharedPath, OnlyWhenMostOfItsJudgedSessionsAreShort) {
  // A few sessions short (their own bad luck, or their own last mile): the path is not full.
  EXPECT_TRUE(beyond_shared_path(path(10, 30e3, 4)).empty());
  EXPECT_EQ(beyond_shared_path(path(10, 30e3, 5)).size(), 7u);
  // Sessions not judged yet do not count either way, but do take their place by age.
  auto members = path(10, 30e3, 2);
  for (std::uint32_t i = 4; i < 10; ++i) members[i].judged = false;
  EXPECT_EQ(beyond_shared_path(members).size(), 7u);
}

TEST(SharedPath, ALoneSessionIsLeftToItsOwnBreaker) {
  EXPECT_TRUE(beyond_shared_path(path(1, 0, 1)).empty());
  // Nor is the oldest of a path that carried nothing ended with the others.
  const auto beyond = beyond_shared_path(path(3, 0, 3));
  EXPECT_EQ(beyond, (std::vector<std::uint32_t>{1, 2}));
}

TEST(SharedPath, StreamsOfDifferentRatesAreFittedOldestFirst) {
  // Three sessions that need 300, 100 and 100 kB/s through a path that carried 400: the third goes.
  std::vector<PathMember> members = path(3, 0, 3);
  members[0].needed = 300e3;
  members[0].carried = 240e3;
  members[1].carried = members[2].carried = 80e3;
  EXPECT_EQ(beyond_shared_path(members), (std::vector<std::uint32_t>{2}));
}

}  // namespace
}  // namespace ncast::server
