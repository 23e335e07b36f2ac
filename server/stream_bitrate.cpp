#include "server/stream_bitrate.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <vector>

#include "server/ts_packets.hpp"

namespace ncast::server {
namespace {

constexpr std::uint64_t kPcrWrap = (std::uint64_t{1} << 33) * 300;
constexpr std::size_t kEndBytes = std::size_t{1} << 20;

std::vector<std::uint8_t> read_at(std::ifstream& in, const std::filesystem::path& path, std::uint64_t at,
                                  std::size_t size) {
  std::vector<std::uint8_t> buf(size);
  in.seekg(static_cast<std::streamoff>(at));
  in.read(reinterpret_cast<char*>(buf.data()), static_cast<std::streamsize>(size));
  if (!in) throw std::runtime_error("error reading " + path.string());
  return buf;
}

std::string mbits(std::uint64_t bps) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g Mbit/s", static_cast<double>(bps) / 1e6);
  return text;
}

}  // namespace

std::optional<std::uint64_t> pcr_bitrate(std::span<const std::uint8_t> head, std::span<const std::uint8_t> tail,
                                         std::uint64_t tail_offset) {
  for (std::size_t a = 0; a + ts::kPacketSize <= head.size(); a += ts::kPacketSize) {
    const auto first = ts::pcr(head.data() + a);
    if (!first) continue;
    const std::uint16_t clock = ts::pid(head.data() + a);
    for (std::size_t b = tail.size() / ts::kPacketSize * ts::kPacketSize; b >= ts::kPacketSize; b -= ts::kPacketSize) {
      const std::uint8_t* p = tail.data() + b - ts::kPacketSize;
      const auto last = ts::pcr(p);
      if (!last || ts::pid(p) != clock) continue;
      const std::uint64_t ticks = (*last + kPcrWrap - *first) % kPcrWrap;
      const std::uint64_t last_at = tail_offset + b - ts::kPacketSize;
      if (last_at <= a || ticks < ts::kPcrHz / 10) return std::nullopt;
      const double seconds = static_cast<double>(ticks) / ts::kPcrHz;
      return static_cast<std::uint64_t>(8.0 * static_cast<double>(last_at - a) / seconds);
    }
    return std::nullopt;
  }
  return std::nullopt;
}

std::optional<std::uint64_t> file_bitrate(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path.string() + ": " + std::strerror(errno));
  const std::uint64_t size = std::filesystem::file_size(path);
  const auto head = read_at(in, path, 0, static_cast<std::size_t>(std::min<std::uint64_t>(size, kEndBytes)));
  if (!ts::looks_like_ts(head)) return std::nullopt;
  const std::uint64_t tail_offset = size > kEndBytes ? (size - kEndBytes) / ts::kPacketSize * ts::kPacketSize : 0;
  const auto tail = read_at(in, path, tail_offset, static_cast<std::size_t>(size - tail_offset));
  return pcr_bitrate(head, tail, tail_offset);
}

std::uint64_t pacing_bitrate(std::uint64_t declared, std::uint64_t measured) { return std::max(declared, measured); }

std::optional<std::string> bitrate_warning(const std::string& stream, std::uint64_t declared, std::uint64_t measured) {
  // Within a few per cent is measurement noise (a live window, a muxer's start-up burst), no mistake.
  if (declared == 0 || static_cast<double>(declared) >= 0.95 * static_cast<double>(measured)) return std::nullopt;
  return "stream " + stream + ": --bitrate " + mbits(declared) + " is below the measured " + mbits(measured) +
         "; pacing at the measured rate";
}

}  // namespace ncast::server
