// The MPEG-TS scanner: packet detection, PCR, and entry points at keyframes (moved back to their tables).
#include "server/ts_packets.hpp"

#include <gtest/gtest.h>

#include "tests/server/ts_builder.hpp"

namespace ncast::server {
namespace {

using test::Bytes;

// Offsets of every entry point the scanner finds in ts.
std::vector<std::uint64_t> entries(const Bytes& ts) {
  ts::EntryScanner scanner;
  std::vector<std::uint64_t> found;
  for (std::size_t at = 0; at + ts::kPacketSize <= ts.size(); at += ts::kPacketSize)
    if (auto e = scanner.scan(ts.data() + at, at)) found.push_back(*e);
  return found;
}

TEST(TsPackets, RecognisesTransportStreams) {
  Bytes ts;
  test::add_pat(ts);
  test::add_continuation(ts, 4);
  EXPECT_TRUE(ts::looks_like_ts(ts));
  EXPECT_TRUE(ts::looks_like_ts({ts.data(), 200}));  // one packet is enough to tell
  EXPECT_FALSE(ts::looks_like_ts({ts.data(), 100}));
  ts[2 * ts::kPacketSize] = 0x46;
  EXPECT_FALSE(ts::looks_like_ts(ts));
  EXPECT_FALSE(ts::looks_like_ts({ts.data() + 1, ts.size() - 1}));
}

TEST(TsPackets, ReadsThePcr) {
  Bytes ts;
  const std::uint64_t value = (std::uint64_t{1} << 33) * 300 - 1;  // the largest: every bit of base and extension
  test::add_packet(ts, test::spec(0x100, false, false, value));
  test::add_packet(ts, test::spec(0x100, false, false, 27'000'000));
  test::add_packet(ts, test::spec(0x100, false, true));
  EXPECT_EQ(ts::pcr(ts.data()), value);
  EXPECT_EQ(ts::pcr(ts.data() + 188), 27'000'000u);
  EXPECT_EQ(ts::pcr(ts.data() + 376), std::nullopt);
  ts[376 + 4] = 200;  // an adaptation field longer than the packet
  EXPECT_EQ(ts::pcr(ts.data() + 376), std::nullopt);
}

TEST(TsPackets, EntryPointsAreVideoKeyframesWithTheirTables) {
  Bytes ts;
  test::add_pat(ts);                                      // 0: tables...
  test::add_packet(ts, test::spec(0x1000, true, false));  // 188: PMT
  test::add_video_start(ts, true);                        // 376: ...then the keyframe: entry at 0
  test::add_continuation(ts, 2);                          // 564, 752
  test::add_audio_start(ts);                              // 940: audio random access is not a video entry point
  test::add_video_start(ts, false);                       // 1128: a P picture
  test::add_video_start(ts, true);                        // 1316: a keyframe without tables: entry here
  test::add_pat(ts);                                      // 1504: tables, then a P picture: not moved back to them
  test::add_video_start(ts, false);                       // 1692
  test::add_continuation(ts);                             // 1880
  test::add_video_start(ts, true);                        // 2068
  EXPECT_EQ(entries(ts), (std::vector<std::uint64_t>{0, 1316, 2068}));
}

TEST(TsPackets, AudioOnlyStreamsEnterAtAudioRandomAccess) {
  Bytes ts;
  test::add_audio_start(ts);
  test::add_continuation(ts);
  test::add_audio_start(ts);
  EXPECT_EQ(entries(ts), (std::vector<std::uint64_t>{0, 376}));
}

TEST(TsPackets, IgnoresPacketsOutOfSync) {
  Bytes ts;
  test::add_pat(ts);
  test::add_video_start(ts, true);
  ts[188] = 0;
  EXPECT_TRUE(entries(ts).empty());
}

}  // namespace
}  // namespace ncast::server
