#include "server/closing_sessions.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace ncast::server {
namespace {

using namespace std::chrono_literals;
using TimePoint = ClosingSessions::TimePoint;

const net::Address kPeer = net::Address::parse("10.0.0.2:5000");
const std::vector<std::uint8_t> kBye{0x42, 1, 2, 3, 4};

TEST(ClosingSessions, APacketOfAnEndedSessionIsAnsweredWithItsBye) {
  ClosingSessions closing;
  const TimePoint t0{};
  closing.add(7, kPeer, kBye, t0);
  const auto answer = closing.answer(7, kPeer, t0 + 200ms);
  EXPECT_EQ(std::vector<std::uint8_t>(answer.begin(), answer.end()), kBye);
  // Not another for every ACK that crossed it: one per gap.
  EXPECT_TRUE(closing.answer(7, kPeer, t0 + 200ms + ClosingSessions::kGap / 2).empty());
  EXPECT_FALSE(closing.answer(7, kPeer, t0 + 200ms + ClosingSessions::kGap).empty());
}

TEST(ClosingSessions, OnlyToTheSessionsPeerAndOnlyForAWhile) {
  ClosingSessions closing;
  const TimePoint t0{};
  closing.add(7, kPeer, kBye, t0);
  EXPECT_TRUE(closing.answer(8, kPeer, t0 + 100ms).empty());                                 // another id
  EXPECT_TRUE(closing.answer(7, net::Address::parse("10.0.0.3:5000"), t0 + 100ms).empty());  // elsewhere
  EXPECT_TRUE(closing.answer(7, kPeer, t0 + ClosingSessions::kLinger).empty());
  closing.expire(t0 + ClosingSessions::kLinger - 1ms);
  EXPECT_EQ(closing.size(), 1u);
  closing.expire(t0 + ClosingSessions::kLinger);
  EXPECT_EQ(closing.size(), 0u);
}

}  // namespace
}  // namespace ncast::server
