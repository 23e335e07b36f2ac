// A source's bitrate: the moving window over live arrivals, the PCR clock of transport stream files,
// and what paces sessions (the higher of declared and measured, with a warning when it is measured).
#include <gtest/gtest.h>

#include "server/bitrate_meter.hpp"
#include "server/stream_bitrate.hpp"
#include "tests/server/ts_builder.hpp"

namespace ncast::server {
namespace {

using namespace std::chrono_literals;
using test::Bytes;

TEST(BitrateMeter, MeasuresArrivalsOverItsWindow) {
  BitrateMeter meter(10s, 2s);
  const auto t0 = BitrateMeter::Clock::now();
  // 1.26 Mbit/s in reads of 7,875 octets every 50 ms.
  for (int i = 0; i <= 20; ++i) meter.add(t0 + i * 50ms, 7875);
  EXPECT_EQ(meter.bitrate(), 0u) << "one second is too short to tell";
  for (int i = 21; i <= 400; ++i) meter.add(t0 + i * 50ms, 7875);
  EXPECT_NEAR(static_cast<double>(meter.bitrate()), 1.26e6, 1e3);
  // The source doubles its rate: after a window, only the new rate counts.
  for (int i = 401; i <= 700; ++i) meter.add(t0 + i * 50ms, 2 * 7875);
  EXPECT_NEAR(static_cast<double>(meter.bitrate()), 2.52e6, 2e3);
}

TEST(BitrateMeter, MergesCloseArrivals) {
  BitrateMeter meter(10s, 1s);
  const auto t0 = BitrateMeter::Clock::now();
  // A fast-fed pipe: reads every millisecond for three seconds, 64 KiB each.
  for (int i = 0; i <= 3000; ++i) meter.add(t0 + i * 1ms, 65536);
  EXPECT_NEAR(static_cast<double>(meter.bitrate()), 65536 * 8 * 1000.0, 65536 * 8 * 1000.0 * 0.02);
}

// A transport stream of `seconds` at `bps`, a PCR every 40 ms on PID 0x100, other packets between.
Bytes clocked_stream(double seconds, double bps, std::uint64_t first_pcr) {
  Bytes ts;
  const double packets_per_second = bps / 8 / 188;
  const auto total = static_cast<std::size_t>(seconds * packets_per_second);
  for (std::size_t i = 0; i < total; ++i) {
    const double t = static_cast<double>(i) / packets_per_second;
    const bool clock = i % static_cast<std::size_t>(packets_per_second * 0.04) == 0;
    const auto pcr = first_pcr + static_cast<std::uint64_t>(t * 27e6);
    test::add_packet(ts, test::spec(clock ? 0x100 : 0x101, false, false,
                                    clock ? std::optional(pcr % ((std::uint64_t{1} << 33) * 300)) : std::nullopt));
  }
  return ts;
}

TEST(PcrBitrate, FromTheFirstAndLastClockReference) {
  const Bytes ts = clocked_stream(20, 1.26e6, 27'000'000);
  const std::size_t tail_at = ts.size() / 2 / 188 * 188;
  const auto bps = pcr_bitrate({ts.data(), 100 * 188}, {ts.data() + tail_at, ts.size() - tail_at}, tail_at);
  ASSERT_TRUE(bps);
  EXPECT_NEAR(static_cast<double>(*bps), 1.26e6, 1.26e6 * 0.002);
}

TEST(PcrBitrate, SurvivesTheClockWrapping) {
  const std::uint64_t near_wrap = (std::uint64_t{1} << 33) * 300 - 27'000'000;  // a second before it wraps
  const Bytes ts = clocked_stream(5, 800e3, near_wrap);
  const auto bps = pcr_bitrate(ts, ts, 0);
  ASSERT_TRUE(bps);
  EXPECT_NEAR(static_cast<double>(*bps), 800e3, 800e3 * 0.01);
}

TEST(PcrBitrate, NothingWithoutTwoClockReferences) {
  Bytes ts;
  test::add_pat(ts);
  test::add_continuation(ts, 10);
  EXPECT_FALSE(pcr_bitrate(ts, ts, 0));
  test::add_packet(ts, test::spec(0x100, false, false, 1000));
  EXPECT_FALSE(pcr_bitrate(ts, ts, 0)) << "a single PCR spans no time";
}

TEST(StreamBitrate, PacesAtTheHigherAndWarnsWhenTheDeclaredIsLow) {
  EXPECT_EQ(pacing_bitrate(1'000'000, 1'260'000), 1'260'000u);
  EXPECT_EQ(pacing_bitrate(2'000'000, 1'260'000), 2'000'000u);
  EXPECT_EQ(pacing_bitrate(0, 0), 0u);
  EXPECT_EQ(bitrate_warning("cam", 1'000'000, 1'260'000),
            "stream cam: --bitrate 1 Mbit/s is below the measured 1.26 Mbit/s; pacing at the measured rate");
  EXPECT_FALSE(bitrate_warning("cam", 0, 1'260'000)) << "nothing was declared";
  EXPECT_FALSE(bitrate_warning("cam", 2'000'000, 1'260'000));
  EXPECT_FALSE(bitrate_warning("cam", 1'220'000, 1'260'000)) << "3 % is noise";
}

}  // namespace
}  // namespace ncast::server
