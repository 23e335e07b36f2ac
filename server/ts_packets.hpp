#pragma once
// Just enough of MPEG-TS (ISO/IEC 13818-1) to cut a live stream where a joining peer can start
// decoding: packet boundaries, random access points and the PCR clock. Nothing here trusts its input:
// a packet that does not parse is simply not a random access point and carries no PCR.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace ncast::server::ts {

inline constexpr std::size_t kPacketSize = 188;
inline constexpr std::uint8_t kSyncByte = 0x47;
inline constexpr std::uint64_t kPcrHz = 27'000'000;

// Whether data starts as a transport stream: a sync byte at each of its first four packet starts.
bool looks_like_ts(std::span<const std::uint8_t> data);

// The packet identifier of one 188-octet packet.
std::uint16_t pid(const std::uint8_t* packet);

// The program clock reference of one 188-octet packet, in 27 MHz ticks, if its adaptation field has one.
std::optional<std::uint64_t> pcr(const std::uint8_t* packet);

// Finds where a peer may start: before each keyframe of the video (a PES start with the adaptation
// field's random_access_indicator), or of any stream while no video has been seen (audio-only
// streams). The PAT/PMT a muxer writes just before a keyframe belong to it, so the entry point is
// moved back to them: a decoder starting there knows the programme before the keyframe arrives.
class EntryScanner {
 public:
  // Looks at the packet that starts at octet `offset` of the stream; returns an entry point's offset
  // (this packet's, or that of the tables just before it) when the packet starts a random access point.
  std::optional<std::uint64_t> scan(const std::uint8_t* packet, std::uint64_t offset);

 private:
  bool seen_video_ = false;
  std::optional<std::uint64_t> tables_at_;  // the PAT since which no other PES has started
};

}  // namespace ncast::server::ts
