#pragma once
// Hand-made MPEG-TS packets for the scanner and cutter tests: each helper appends one 188-octet packet.
#include <cstdint>
#include <optional>
#include <vector>

#include "server/ts_packets.hpp"

namespace ncast::server::test {

using Bytes = std::vector<std::uint8_t>;

struct PacketSpec {
  std::uint16_t pid = 0x100;
  bool unit_start = false;
  bool random_access = false;
  std::optional<std::uint64_t> pcr;  // 27 MHz ticks
  std::optional<std::uint8_t> pes_stream_id;
};

// GCC warns of designated initializers that leave members out: the tests name what they set.
inline PacketSpec spec(std::uint16_t pid, bool unit_start, bool random_access,
                       std::optional<std::uint64_t> pcr = std::nullopt,
                       std::optional<std::uint8_t> pes_stream_id = std::nullopt) {
  return {pid, unit_start, random_access, pcr, pes_stream_id};
}

inline void add_packet(Bytes& ts, const PacketSpec& s) {
  Bytes p(ts::kPacketSize, 0xFF);
  p[0] = ts::kSyncByte;
  p[1] = static_cast<std::uint8_t>((s.unit_start ? 0x40 : 0) | (s.pid >> 8 & 0x1F));
  p[2] = static_cast<std::uint8_t>(s.pid & 0xFF);
  const bool adaptation = s.random_access || s.pcr;
  p[3] = static_cast<std::uint8_t>((adaptation ? 0x30 : 0x10));
  std::size_t at = 4;
  if (adaptation) {
    p[4] = s.pcr ? 7 : 1;
    p[5] = static_cast<std::uint8_t>((s.random_access ? 0x40 : 0) | (s.pcr ? 0x10 : 0));
    if (s.pcr) {
      const std::uint64_t base = *s.pcr / 300, ext = *s.pcr % 300;
      p[6] = static_cast<std::uint8_t>(base >> 25);
      p[7] = static_cast<std::uint8_t>(base >> 17);
      p[8] = static_cast<std::uint8_t>(base >> 9);
      p[9] = static_cast<std::uint8_t>(base >> 1);
      p[10] = static_cast<std::uint8_t>((base & 1) << 7 | 0x7E | ext >> 8);
      p[11] = static_cast<std::uint8_t>(ext);
    }
    at = 5 + p[4];
  }
  if (s.pes_stream_id) {
    p[at] = 0;
    p[at + 1] = 0;
    p[at + 2] = 1;
    p[at + 3] = *s.pes_stream_id;
  }
  ts.insert(ts.end(), p.begin(), p.end());
}

inline void add_pat(Bytes& ts) { add_packet(ts, spec(0, true, false)); }
inline void add_video_start(Bytes& ts, bool keyframe) {
  add_packet(ts, spec(0x100, true, keyframe, std::nullopt, 0xE0));
}
inline void add_audio_start(Bytes& ts) { add_packet(ts, spec(0x101, true, true, std::nullopt, 0xC0)); }
inline void add_continuation(Bytes& ts, std::size_t packets = 1) {
  for (std::size_t i = 0; i < packets; ++i) add_packet(ts, spec(0x100, false, false));
}

}  // namespace ncast::server::test
