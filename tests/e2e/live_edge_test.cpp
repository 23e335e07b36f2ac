// A live MPEG-TS channel from ffmpeg through ncast-server --live, joined late by ncast-peer at its
// live edge (the default): the peer's output must begin on a packet boundary at a keyframe, so that
// ffmpeg decodes it from its first frame without one error. The server measures the channel's bitrate
// and says when --bitrate is below it. Skipped where ffmpeg or libx264 is missing.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "tests/e2e/e2e_support.hpp"

namespace ncast::e2e {
namespace {

std::optional<std::string> on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "");
  for (std::string d; std::getline(dirs, d, ':');) {
    const auto candidate = std::filesystem::path(d) / program;
    if (!d.empty() && ::access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return std::nullopt;
}

// Lines ffmpeg printed at -v error: each one a decoder or demuxer error.
std::size_t error_lines(const std::string& text) {
  std::size_t n = 0;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) n += !line.empty();
  return n;
}

TEST(LiveEdge, ALateJoinerStartsAtAKeyframeAndDecodesWithoutErrors) {
  const auto ffmpeg = on_path("ffmpeg"), ffprobe = on_path("ffprobe");
  if (!ffmpeg || !ffprobe) GTEST_SKIP() << "ffmpeg and ffprobe are needed";
  TempDir dir;
  const auto fifo = dir / "channel.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // 32 KiB segments: a one-second GOP spans several, so most segments do not begin at a keyframe
  // (and n·L is not a multiple of 188).
  // About 1.9 Mbit/s of video, declared as 1 Mbit/s.
  auto server = start_server(
      dir, "server",
      {"--live", "channel=" + fifo.string(), "--symbols", "32", "--stats-interval", "0", "--bitrate", "1M"});
  Process encoder({*ffmpeg,
                   "-hide_banner",
                   "-v",
                   "error",
                   "-re",
                   "-f",
                   "lavfi",
                   "-i",
                   "testsrc2=size=640x360:rate=25",
                   "-t",
                   "9",
                   "-c:v",
                   "libx264",
                   "-preset",
                   "ultrafast",
                   "-g",
                   "25",
                   "-pix_fmt",
                   "yuv420p",
                   "-f",
                   "mpegts",
                   "-y",
                   fifo.string()},
                  dir / "encoder.stdout", dir / "encoder.stderr");
  std::this_thread::sleep_for(4s);  // the channel is on air for a while before the peer tunes in
  ASSERT_FALSE(encoder.wait(0ms)) << "ffmpeg ended early (libx264 missing?): " << encoder.err();
  const auto out = dir / "joined.ts";
  auto peer = start_peer(dir, "peer",
                         {"-s", "127.0.0.1:" + std::to_string(server.port), "--stream", "channel", "-o", out.string()});
  ASSERT_EQ(encoder.wait(20s), 0) << encoder.err();
  const auto r = finish(*peer);
  ASSERT_EQ(r.code, 0) << r.report.dump() << peer->err();
  EXPECT_EQ(r.report["stalls"], 0) << "waits for segments not made yet are no stalls";
  const auto end = server.process->wait_event("live_end", 5s);
  ASSERT_TRUE(end) << server.process->out();
  EXPECT_EQ((*end)["stream"], "channel");
  EXPECT_GT((*end)["bitrate"].get<double>(), 1e6);
  EXPECT_NE(server.process->err().find("stream channel: --bitrate 1 Mbit/s is below the measured"), std::string::npos)
      << server.process->err();

  const auto media = read_bytes(out);
  ASSERT_GE(media.size(), 10 * 188u);
  for (std::size_t at = 0; at < 10 * 188; at += 188) ASSERT_EQ(media[at], 0x47) << "no packet at octet " << at;
  // Joined about four of the nine seconds in: well short of the whole channel.
  const double aired = scrape(server.metrics).at("ncast_stream_bytes");
  EXPECT_LT(static_cast<double>(media.size()), 0.8 * aired) << "the peer started at the channel's beginning";

  Process decode({*ffmpeg, "-hide_banner", "-v", "error", "-i", out.string(), "-f", "null", "-"}, dir / "decode.stdout",
                 dir / "decode.stderr");
  ASSERT_EQ(decode.wait(30s), 0) << decode.err();
  EXPECT_EQ(error_lines(decode.err()), 0u) << decode.err();

  Process probe({*ffprobe, "-v", "error", "-select_streams", "v", "-read_intervals", "%+#1", "-show_entries",
                 "frame=key_frame,pict_type", "-of", "csv=p=0", out.string()},
                dir / "probe.stdout", dir / "probe.stderr");
  ASSERT_EQ(probe.wait(30s), 0) << probe.err();
  EXPECT_EQ(probe.out().substr(0, 3), "1,I") << "the first frame: " << probe.out();
}

TEST(LiveEdge, ATransportStreamFileIsPacedAtItsPcrBitrate) {
  const auto ffmpeg = on_path("ffmpeg");
  if (!ffmpeg) GTEST_SKIP() << "ffmpeg is needed";
  TempDir dir;
  const auto film = dir / "film.ts";
  Process encoder({*ffmpeg,    "-hide_banner",
                   "-v",       "error",
                   "-f",       "lavfi",
                   "-i",       "testsrc2=size=640x360:rate=25",
                   "-t",       "4",
                   "-c:v",     "libx264",
                   "-preset",  "ultrafast",
                   "-g",       "25",
                   "-pix_fmt", "yuv420p",
                   "-f",       "mpegts",
                   "-y",       film.string()},
                  dir / "encoder.stdout", dir / "encoder.stderr");
  ASSERT_EQ(encoder.wait(30s), 0) << encoder.err();
  auto server = start_server(dir, "server", {"--file", film.string(), "--bitrate", "500k", "--stats-interval", "0"});
  const std::string err = server.process->err();
  const auto at = err.find("stream film.ts: --bitrate 0.5 Mbit/s is below the measured ");
  ASSERT_NE(at, std::string::npos) << err;
  // The PCRs span the file's four seconds: its size over them, within a few per cent.
  const double measured = std::stod(err.substr(at + 59)) * 1e6;
  const double expected = static_cast<double>(std::filesystem::file_size(film)) * 8 / 4;
  EXPECT_NEAR(measured, expected, 0.1 * expected) << err;
}

}  // namespace
}  // namespace ncast::e2e
