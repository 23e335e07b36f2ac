#pragma once
// The sliding window of packet numbers of docs/protocol.md section 5: the largest number seen and a
// bitmap of the 1024 at or below it. check() is cheap and runs before the tag is verified; accept()
// runs only after, so a forged packet cannot move the window.
#include <array>
#include <cstddef>
#include <cstdint>

namespace ncast::proto {

class ReplayWindow {
 public:
  static constexpr std::uint64_t kSize = 1024;

  // Whether number would be new: not seen and not older than the window.
  bool check(std::uint64_t number) const;
  // Records number as seen (after its packet authenticated); numbers that fail check() are ignored.
  void accept(std::uint64_t number);

  bool empty() const { return empty_; }
  std::uint64_t largest() const { return largest_; }
  // Which of the 64 numbers below largest − 64·word were seen: bit i for largest − 1 − (64·word + i)
  // (an ACK's history, docs/protocol.md section 2.9).
  std::uint64_t seen_below(std::size_t word) const;

 private:
  bool test(std::uint64_t number) const { return bits_[(number % kSize) / 64] >> (number % 64) & 1; }
  void set(std::uint64_t number) { bits_[(number % kSize) / 64] |= std::uint64_t{1} << (number % 64); }
  void clear(std::uint64_t number) { bits_[(number % kSize) / 64] &= ~(std::uint64_t{1} << (number % 64)); }

  std::array<std::uint64_t, kSize / 64> bits_{};  // bit (x mod kSize) for x in (largest − kSize, largest]
  std::uint64_t largest_ = 0;
  bool empty_ = true;
};

}  // namespace ncast::proto
