#include "server/shared_path.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>

namespace ncast::server {
namespace {

using namespace std::chrono_literals;
using TimePoint = std::chrono::steady_clock::time_point;

// `n` sessions of one path, slot i joined i ms after the first, each needing 100 kB/s; the path carried
// `carried_each` of each, and the first `short_count` of them (by slot) are short by their breakers.
std::vector<PathMember> path(std::uint32_t n, double carried_each, std::uint32_t short_count) {
  std::vector<PathMember> members;
  for (std::uint32_t i = 0; i < n; ++i)
    members.push_back(
        {i, TimePoint{} + std::chrono::milliseconds(i), true, i < short_count, carried_each, 100e3, std::nullopt});
  return members;
}

TEST(SharedPath, AFullPathKeepsItsOldestSessionsWithinFourFifthsOfWhatItCarried) {
  // 200 sessions through a path that carries 60 streams: each got 30 kB/s of its 100. The 48 oldest
  // keep theirs (0.8 of 60), a fifth of the path left to the elastic flows beside them.
  auto members = path(200, 30e3, 200);
  std::reverse(members.begin(), members.end());  // the order they are listed in does not matter
  auto beyond = beyond_shared_path(members);
  std::sort(beyond.begin(), beyond.end());
  ASSERT_EQ(beyond.size(), 152u);
  EXPECT_EQ(beyond.front(), 48u);
  EXPECT_EQ(beyond.back(), 199u);
}

TEST(SharedPath, APathThatCarriedNineTenthsOfItsStreamsEndsNone) {
  // Random loss made up for: every session carried what it needs.
  EXPECT_TRUE(beyond_shared_path(path(50, 100e3, 0)).empty());
  // Short by their breakers, whose averages lag, yet the window carried them: the path was relieved
  // (the shed before), and ending a fifth more at every look would leave it empty.
  EXPECT_TRUE(beyond_shared_path(path(50, 100e3, 50)).empty());
  EXPECT_TRUE(beyond_shared_path(path(50, 90e3, 50)).empty());
  EXPECT_EQ(beyond_shared_path(path(50, 89e3, 50)).size(), 15u);  // 35 kept: 0.8 × 50 × 0.89
}

TEST(SharedPath, OnlyWhenMostOfItsJudgedSessionsAreShort) {
  // A few sessions short (their own bad luck, or their own last mile): the path is not full.
  EXPECT_TRUE(beyond_shared_path(path(10, 50e3, 4)).empty());
  EXPECT_EQ(beyond_shared_path(path(10, 50e3, 5)).size(), 6u);
  // Sessions not judged yet do not count either way, but do take their place by age.
  auto members = path(10, 50e3, 2);
  for (std::uint32_t i = 4; i < 10; ++i) members[i].judged = false;
  EXPECT_EQ(beyond_shared_path(members).size(), 6u);
}

TEST(SharedPath, ALoneSessionIsLeftToItsOwnBreaker) {
  EXPECT_TRUE(beyond_shared_path(path(1, 0, 1)).empty());
  // Nor is the oldest of a path that carried nothing ended with the others.
  const auto beyond = beyond_shared_path(path(3, 0, 3));
  EXPECT_EQ(beyond, (std::vector<std::uint32_t>{1, 2}));
}

TEST(SharedPath, StreamsOfDifferentRatesAreFittedOldestFirst) {
  // Sessions that need 200, 100 and 300 kB/s through a path that carried 500 of the 600: the two oldest
  // fit within 400 (0.8 of it), the third does not.
  std::vector<PathMember> members = path(3, 0, 3);
  members[0].needed = 200e3;
  members[2].needed = 300e3;
  members[0].carried = 180e3;
  members[1].carried = 90e3;
  members[2].carried = 230e3;
  EXPECT_EQ(beyond_shared_path(members), (std::vector<std::uint32_t>{2}));
}

TEST(SharedPath, ThePlayersFurthestFromAStallKeepTheirStreams) {
  // 10 sessions through a path that carried an eighth, half or 0.7 of what they need: 1, 4 or 5 keep
  // theirs (0.8 of what it carried). The oldest got their first segment before the path filled and then
  // starved, so their players are nearest a stall: those furthest ahead keep theirs (the older of two
  // alike first), and sessions without a segment yet come last, however old.
  const std::optional<double> ahead[] = {std::nullopt, 0.2, 1.5, 0.9, 1.5, 0.3, 1.2, 0.4, 0.0, std::nullopt};
  for (const auto& [carried, kept] :
       {std::pair{12.5e3, std::vector<std::uint32_t>{2}}, std::pair{50e3, std::vector<std::uint32_t>{2, 3, 4, 6}},
        std::pair{70e3, std::vector<std::uint32_t>{2, 3, 4, 6, 7}}}) {
    auto members = path(10, carried, 10);
    for (std::uint32_t i = 0; i < 10; ++i) members[i].ahead = ahead[i];
    std::vector<std::uint32_t> expected;
    for (std::uint32_t i = 0; i < 10; ++i)
      if (std::find(kept.begin(), kept.end(), i) == kept.end()) expected.push_back(i);
    auto beyond = beyond_shared_path(members);
    std::sort(beyond.begin(), beyond.end());
    EXPECT_EQ(beyond, expected) << "carried " << carried;
  }
}

}  // namespace
}  // namespace ncast::server
