#include "server/live_cutter.hpp"

#include <algorithm>

namespace ncast::server {

void LiveCutter::push(std::span<const std::uint8_t> data) {
  pending_.insert(pending_.end(), data.begin(), data.end());
  if (!ts_ && pending_at_ == 0 && pending_.size() >= 4 * ts::kPacketSize) detect();
  scan();
}

void LiveCutter::detect() { ts_ = pending_at_ == 0 && ts::looks_like_ts(pending_); }

void LiveCutter::scan() {
  if (!ts_.value_or(false)) return;
  const std::uint64_t end = pending_at_ + pending_.size();
  for (; scanned_to_ + ts::kPacketSize <= end; scanned_to_ += ts::kPacketSize) {
    const auto entry = scanner_.scan(pending_.data() + (scanned_to_ - pending_at_), scanned_to_);
    // The tables an entry point moves back to may lie in a segment already cut: then it starts here.
    if (entry) entries_.push_back(std::max(*entry, pending_at_));
    seen_entry_ = seen_entry_ || entry.has_value();
  }
}

std::size_t LiveCutter::packet_floor(std::size_t size) const {
  return size < ts::kPacketSize ? size : size - size % ts::kPacketSize;
}

std::size_t LiveCutter::full_cut() const {
  if (!*ts_) return segment_bytes_;
  const std::uint64_t limit = pending_at_ + segment_bytes_;
  const auto last =
      std::find_if(entries_.rbegin(), entries_.rend(), [&](std::uint64_t e) { return e > pending_at_ && e <= limit; });
  return last != entries_.rend() ? static_cast<std::size_t>(*last - pending_at_) : packet_floor(segment_bytes_);
}

std::optional<LiveCutter::Segment> LiveCutter::next() {
  if (pending_.size() < segment_bytes_) return std::nullopt;
  if (!ts_) {
    detect();
    scan();
  }
  // The tables before a keyframe come a few packets ahead of it: wait until an entry point at the
  // segment's end would have been seen.
  if (*ts_ && pending_.size() < segment_bytes_ + kLookahead) return std::nullopt;
  return cut(full_cut());
}

std::optional<LiveCutter::Segment> LiveCutter::flush() {
  if (pending_.empty()) return std::nullopt;
  if (!ts_) {
    detect();
    scan();
  }
  const std::size_t size = *ts_ ? pending_.size() - pending_.size() % ts::kPacketSize : pending_.size();
  if (size == 0) return std::nullopt;
  return cut(size <= segment_bytes_ ? size : full_cut());
}

std::optional<LiveCutter::Segment> LiveCutter::finish() {
  if (pending_.empty()) return std::nullopt;
  if (!ts_) {
    detect();
    scan();
  }
  return cut(pending_.size() <= segment_bytes_ ? pending_.size() : full_cut());
}

LiveCutter::Segment LiveCutter::cut(std::size_t size) {
  Segment s;
  s.data.assign(pending_.begin(), pending_.begin() + static_cast<long>(size));
  const bool at_entry = !entries_.empty() && entries_.front() == pending_at_;
  s.entry = !*ts_ || at_entry || (!seen_entry_ && pending_at_ % ts::kPacketSize == 0);
  pending_.erase(pending_.begin(), pending_.begin() + static_cast<long>(size));
  pending_at_ += size;
  while (!entries_.empty() && entries_.front() < pending_at_) entries_.pop_front();
  return s;
}

}  // namespace ncast::server
