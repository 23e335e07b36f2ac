#include "server/ts_packets.hpp"

namespace ncast::server::ts {
namespace {

constexpr std::uint16_t kPatPid = 0;

bool unit_start(const std::uint8_t* p) { return (p[1] & 0x40) != 0; }
bool has_adaptation(const std::uint8_t* p) { return (p[3] & 0x20) != 0; }
bool has_payload(const std::uint8_t* p) { return (p[3] & 0x10) != 0; }

// The adaptation field's flags octet, when the field is long enough to have one.
std::optional<std::uint8_t> adaptation_flags(const std::uint8_t* p) {
  if (!has_adaptation(p) || p[4] == 0 || p[4] > 183) return std::nullopt;
  return p[5];
}

std::size_t payload_offset(const std::uint8_t* p) { return has_adaptation(p) ? 5u + p[4] : 4u; }

// The stream_id of the PES that starts in this packet, if one does.
std::optional<std::uint8_t> pes_stream_id(const std::uint8_t* p) {
  if (!unit_start(p) || !has_payload(p)) return std::nullopt;
  const std::size_t at = payload_offset(p);
  if (at + 4 > kPacketSize || p[at] != 0 || p[at + 1] != 0 || p[at + 2] != 1) return std::nullopt;
  return p[at + 3];
}

bool is_video(std::uint8_t stream_id) { return (stream_id & 0xF0) == 0xE0; }

}  // namespace

std::uint16_t pid(const std::uint8_t* p) { return static_cast<std::uint16_t>((p[1] & 0x1F) << 8 | p[2]); }

bool looks_like_ts(std::span<const std::uint8_t> data) {
  const std::size_t packets = data.size() / kPacketSize;
  if (packets == 0) return false;
  for (std::size_t i = 0; i < packets && i < 4; ++i)
    if (data[i * kPacketSize] != kSyncByte) return false;
  return true;
}

std::optional<std::uint64_t> pcr(const std::uint8_t* p) {
  const auto flags = adaptation_flags(p);
  if (p[0] != kSyncByte || !flags || !(*flags & 0x10) || p[4] < 7) return std::nullopt;
  const std::uint64_t base = std::uint64_t{p[6]} << 25 | std::uint64_t{p[7]} << 17 | std::uint64_t{p[8]} << 9 |
                             std::uint64_t{p[9]} << 1 | p[10] >> 7;
  const std::uint64_t extension = std::uint64_t{p[10] & 1u} << 8 | p[11];
  return base * 300 + extension;
}

std::optional<std::uint64_t> EntryScanner::scan(const std::uint8_t* p, std::uint64_t offset) {
  if (p[0] != kSyncByte) {
    tables_at_.reset();
    return std::nullopt;
  }
  if (pid(p) == kPatPid) {
    if (!tables_at_) tables_at_ = offset;
    return std::nullopt;
  }
  const auto stream_id = pes_stream_id(p);
  if (!stream_id) return std::nullopt;
  const bool video = is_video(*stream_id);
  seen_video_ = seen_video_ || video;
  const auto flags = adaptation_flags(p);
  const bool random_access = flags && (*flags & 0x40) && (video || !seen_video_);
  const auto entry = random_access ? std::optional(tables_at_.value_or(offset)) : std::nullopt;
  tables_at_.reset();
  return entry;
}

}  // namespace ncast::server::ts
