#include "server/stream_catalog.hpp"

#include <filesystem>
#include <stdexcept>

#include "server/ingest.hpp"
#include "server/stream_bitrate.hpp"

namespace ncast::server {

StreamCatalog::StreamCatalog(const ServerOptions& options, std::uint32_t server_id, CodedCache& cache,
                             SegmentCache& segments)
    : options_(options), server_id_(server_id), cache_(cache), density_(rlnc::Density::from_fraction(options.density)) {
  for (const auto& f : options.files) add_file(f, std::filesystem::path(f).filename().string(), segments);
  for (const auto& d : options.dirs)
    for (const auto& f : media_files(d)) add_file(f, f.filename().string(), segments);
  for (const auto& l : options.live) {
    MediaStream& s = add(l.name, true, 0);
    s.set_window(live_window(options));
    live_.push_back(&s);
  }
}

void StreamCatalog::add_file(const std::filesystem::path& path, const std::string& name, SegmentCache& segments) {
  const std::uint64_t measured = file_bitrate(path).value_or(0);
  if (auto w = bitrate_warning(name, options_.bitrate, measured)) warnings_.push_back(*w);
  ingest_file(path, add(name, false, measured), segments);
}

LiveWindow live_window(const ServerOptions& options) {
  LiveWindow w;
  w.bytes = options.live_window_bytes;
  // Seconds of media are octets at a known bitrate (so a source fed faster than real time keeps as
  // much media); without one, seconds since arrival.
  if (options.live_window_s > 0 && options.bitrate > 0)
    w.bytes = static_cast<std::uint64_t>(options.live_window_s) * options.bitrate / 8;
  else w.age = std::chrono::seconds(options.live_window_s);
  return w;
}

std::vector<MediaStream*> StreamCatalog::all() const {
  std::vector<MediaStream*> all;
  all.reserve(streams_.size());
  for (const auto& s : streams_) all.push_back(s.get());
  return all;
}

MediaStream& StreamCatalog::add(const std::string& name, bool live, std::uint64_t measured_bitrate) {
  if (name.empty() || name.size() > 255)
    throw std::invalid_argument("stream name '" + name + "' must be 1..255 octets");
  for (const auto& s : streams_)
    if (s->info().name == name) throw std::invalid_argument("two streams are named '" + name + "'");
  StreamInfo info;
  info.name = name;
  info.stream_id = stream_id_of(name);
  info.server_id = server_id_;
  info.n = options_.n;
  info.symbol_size = options_.symbol_size;
  info.bitrate = pacing_bitrate(options_.bitrate, measured_bitrate);
  info.live = live;
  streams_.push_back(std::make_unique<MediaStream>(info, cache_, density_));
  return *streams_.back();
}

}  // namespace ncast::server
