// Cutting live sources: bytes at n·L, MPEG-TS on packet boundaries at the last keyframe that fits.
#include "server/live_cutter.hpp"

#include <gtest/gtest.h>

#include "tests/server/ts_builder.hpp"

namespace ncast::server {
namespace {

using test::Bytes;
constexpr std::size_t P = ts::kPacketSize;

// Every segment the cutter gives for data pushed in pieces of `piece` octets, then ended.
std::vector<LiveCutter::Segment> cut_all(const Bytes& data, std::size_t segment_bytes, std::size_t piece) {
  LiveCutter cutter(segment_bytes);
  std::vector<LiveCutter::Segment> out;
  for (std::size_t at = 0; at < data.size(); at += piece) {
    cutter.push({data.data() + at, std::min(piece, data.size() - at)});
    while (auto s = cutter.next()) out.push_back(std::move(*s));
  }
  while (auto s = cutter.finish()) out.push_back(std::move(*s));
  return out;
}

Bytes joined(const std::vector<LiveCutter::Segment>& segments) {
  Bytes all;
  for (const auto& s : segments) all.insert(all.end(), s.data.begin(), s.data.end());
  return all;
}

// A GOP: PAT, keyframe, then `packets` more packets of video.
void add_gop(Bytes& ts, std::size_t packets) {
  test::add_pat(ts);
  test::add_video_start(ts, true);
  test::add_continuation(ts, packets);
}

TEST(LiveCutter, OtherMediaIsCutEveryNL) {
  Bytes data(1000);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint8_t>(i * 7 + 1);
  const auto segments = cut_all(data, 300, 77);
  ASSERT_EQ(segments.size(), 4u);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(segments[i].data.size(), 300u);
  EXPECT_EQ(segments[3].data.size(), 100u);
  for (const auto& s : segments) EXPECT_TRUE(s.entry);
  EXPECT_EQ(joined(segments), data);
}

TEST(LiveCutter, TransportStreamsAreCutAtTheLastKeyframeThatFits) {
  Bytes ts;
  add_gop(ts, 3);                            // 5 packets at 0
  add_gop(ts, 10);                           // 12 packets at 5
  add_gop(ts, 1);                            // 3 packets at 17
  add_gop(ts, 30);                           // 32 packets at 20, longer than a segment
  add_gop(ts, 2);                            // 4 packets at 52
  add_gop(ts, 8);                            // 10 packets at 56
  const std::size_t segment = 20 * P + 100;  // not a multiple of the packet size
  const auto segments = cut_all(ts, segment, 1000);
  std::vector<std::size_t> packets;
  std::vector<bool> entry;
  for (const auto& s : segments) {
    EXPECT_EQ(s.data.size() % P, 0u);
    EXPECT_LE(s.data.size(), segment);
    packets.push_back(s.data.size() / P);
    entry.push_back(s.entry);
  }
  // 0..20: three GOPs; 20..40 the long GOP's start (a packet multiple); 40..56 its rest and a GOP; the last.
  EXPECT_EQ(packets, (std::vector<std::size_t>{20, 20, 16, 10}));
  EXPECT_EQ(entry, (std::vector<bool>{true, true, false, true}));
  EXPECT_EQ(joined(segments), ts);
}

TEST(LiveCutter, APauseFlushesWholePacketsOnly) {
  Bytes ts;
  add_gop(ts, 4);
  LiveCutter cutter(100 * P);
  cutter.push({ts.data(), 3 * P + 50});
  EXPECT_FALSE(cutter.next());
  auto s = cutter.flush();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->data.size(), 3 * P);
  EXPECT_TRUE(s->entry);
  EXPECT_FALSE(cutter.flush());  // 50 octets of a packet wait for the rest of it
  cutter.push({ts.data() + 3 * P + 50, ts.size() - 3 * P - 50});
  s = cutter.flush();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->data.size(), 3 * P);
  EXPECT_FALSE(s->entry);  // mid-GOP
  EXPECT_EQ(cutter.is_ts(), true);
}

// A pause while more than n·L is in (the last few packets that next() waits to see) still cuts at the
// keyframe within n·L.
TEST(LiveCutter, APauseAfterMoreThanASegmentCutsAtTheKeyframe) {
  Bytes ts;
  add_gop(ts, 10);  // 12 packets
  add_gop(ts, 10);
  LiveCutter cutter(16 * P);
  cutter.push({ts.data(), 18 * P});
  EXPECT_FALSE(cutter.next()) << "the packets after n·L are not all in";
  auto s = cutter.flush();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->data.size(), 12 * P);
  s = cutter.flush();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->data.size(), 6 * P);
  EXPECT_TRUE(s->entry);
}

TEST(LiveCutter, AStreamWithoutRandomAccessPointsMayBeJoinedAtAnyPacket) {
  Bytes ts;
  test::add_pat(ts);
  test::add_continuation(ts, 9);
  const auto segments = cut_all(ts, 3 * P + 10, 188 * 2);
  ASSERT_EQ(segments.size(), 4u);
  for (const auto& s : segments) EXPECT_TRUE(s.entry);
  EXPECT_EQ(segments[0].data.size(), 3 * P);
}

}  // namespace
}  // namespace ncast::server
