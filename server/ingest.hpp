#pragma once
// Getting media into streams. A file is cut into segments of n·L octets read on demand (video on
// demand: only its size is read at start-up, its segments through the SegmentCache); a
// live source (a pipe, standard input, or a file that is still being written) is read as data arrives,
// a segment is cut whenever n·L octets are in (for MPEG-TS: at the last keyframe within them, see
// LiveCutter), and a shorter one when the source pauses for flush_after, so a live peer is never left
// waiting for a segment that will not fill.
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <vector>

#include "server/bitrate_meter.hpp"
#include "server/live_cutter.hpp"
#include "server/media_stream.hpp"

namespace ncast::server {

// Serves the file's segments on demand through cache and marks the stream final. Throws
// std::runtime_error naming the file when it cannot be opened or is empty.
void ingest_file(const std::filesystem::path& path, MediaStream& stream, SegmentCache& cache);

// The regular files of a directory, sorted by name (each one a stream); throws if there are none.
std::vector<std::filesystem::path> media_files(const std::filesystem::path& directory);

class LiveIngest {
 public:
  struct Options {
    std::chrono::milliseconds flush_after{500};  // cut a short segment after this long without data
    std::chrono::milliseconds poll{50};          // growing regular files: how often to look
    std::chrono::seconds end_after{0};           // growing regular files: end after this long unchanged (0: never)
  };
  // path "-" is standard input. on_change runs after segments are added or the stream ends.
  LiveIngest(boost::asio::io_context& io, const std::filesystem::path& path, MediaStream& stream, Options options,
             std::function<void()> on_change);
  ~LiveIngest();
  void start();
  void stop();
  bool ended() const { return ended_; }
  // bit/s as the source arrives (moving window), 0 until a couple of seconds have come.
  std::uint64_t measured_bitrate() const { return meter_.bitrate(); }

 private:
  void read_pipe();
  void poll_file();
  void take(const std::uint8_t* data, std::size_t len);
  // Appends the segments cut() gives until it gives none; whether there were any.
  bool append_all(const std::function<std::optional<LiveCutter::Segment>()>& cut);
  void arm_flush();
  void end();

  std::filesystem::path path_;
  MediaStream& stream_;
  Options options_;
  std::function<void()> on_change_;
  int fd_ = -1;
  bool pipe_ = false, ended_ = false, stopped_ = false, seen_data_ = false;
  boost::asio::posix::stream_descriptor descriptor_;
  boost::asio::steady_timer poll_timer_, flush_timer_;
  LiveCutter cutter_;
  BitrateMeter meter_;
  std::vector<std::uint8_t> chunk_;
  std::chrono::steady_clock::time_point last_growth_;
};

}  // namespace ncast::server
