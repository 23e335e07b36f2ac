#pragma once
// The streams ncast-server serves, made from its options: files and directories, read on demand through
// the SegmentCache, and the live sources' streams, empty until their LiveIngest fills them, each with
// the options' retention window. Names are unique, 1..255 octets. A transport stream file is paced at
// its PCR bitrate where that is above --bitrate.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "server/coded_cache.hpp"
#include "server/media_stream.hpp"
#include "server/options.hpp"
#include "server/segment_cache.hpp"

namespace ncast::server {

class StreamCatalog {
 public:
  // Opens the files now (their sizes only); throws std::invalid_argument on a bad or repeated name, as
  // ingest_file on I/O.
  StreamCatalog(const ServerOptions& options, std::uint32_t server_id, CodedCache& cache, SegmentCache& segments);

  const std::vector<std::unique_ptr<MediaStream>>& streams() const { return streams_; }
  std::vector<MediaStream*> all() const;
  // One per options.live, in its order.
  const std::vector<MediaStream*>& live() const { return live_; }
  // For the log: files whose measured bitrate is above --bitrate (they are paced at the measured one).
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  void add_file(const std::filesystem::path& path, const std::string& name, SegmentCache& segments);
  MediaStream& add(const std::string& name, bool live, std::uint64_t measured_bitrate);

  const ServerOptions& options_;
  std::uint32_t server_id_;
  CodedCache& cache_;
  rlnc::Density density_;
  std::vector<std::unique_ptr<MediaStream>> streams_;
  std::vector<MediaStream*> live_;
  std::vector<std::string> warnings_;
};

// The retention window of live streams that the options ask for.
LiveWindow live_window(const ServerOptions& options);

}  // namespace ncast::server
