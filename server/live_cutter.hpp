#pragma once
// Where a live source is cut into segments. Bytes in general: a segment of n·L octets whenever that
// many are in. MPEG-TS (recognised by its sync bytes at the start) is cut on 188-octet packet
// boundaries and, where the stream marks random access points, just before the last one that fits in
// n·L, so segments begin at keyframes and a peer joining live starts with a decodable picture.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <vector>

#include "server/ts_packets.hpp"

namespace ncast::server {

class LiveCutter {
 public:
  explicit LiveCutter(std::size_t segment_bytes) : segment_bytes_(segment_bytes) {}

  struct Segment {
    std::vector<std::uint8_t> data;  // 1..n·L octets
    bool entry = true;               // a peer may start here (always, unless the stream is TS)
  };

  void push(std::span<const std::uint8_t> data);
  // The next segment of n·L octets or (TS) up to the last entry point within them; none until enough is in.
  std::optional<Segment> next();
  // What is in now, as the source pauses: whole TS packets only (the rest waits for its packet's end);
  // more than n·L is cut as next() would.
  std::optional<Segment> flush();
  // Everything left, as the source ends.
  std::optional<Segment> finish();

  // Known once the first packets are in (or the first cut is made).
  std::optional<bool> is_ts() const { return ts_; }

 private:
  void detect();
  void scan();
  Segment cut(std::size_t size);
  std::size_t packet_floor(std::size_t size) const;
  // Pending is at least n·L: the size of the segment to cut.
  std::size_t full_cut() const;

  static constexpr std::size_t kLookahead = 8 * ts::kPacketSize;

  std::size_t segment_bytes_;
  std::vector<std::uint8_t> pending_;
  std::uint64_t pending_at_ = 0;  // the stream offset of pending_[0]
  std::optional<bool> ts_;
  ts::EntryScanner scanner_;
  std::uint64_t scanned_to_ = 0;       // stream offset of the first packet not scanned yet
  std::deque<std::uint64_t> entries_;  // entry points at or after pending_at_, increasing
  bool seen_entry_ = false;            // until the first, every packet boundary serves as one
};

}  // namespace ncast::server
