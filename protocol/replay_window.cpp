#include "protocol/replay_window.hpp"

#include <algorithm>

namespace ncast::proto {

bool ReplayWindow::check(std::uint64_t number) const {
  if (empty_ || number > largest_) return true;
  if (largest_ - number >= kSize) return false;
  return !test(number);
}

void ReplayWindow::accept(std::uint64_t number) {
  if (!check(number)) return;
  if (empty_) {
    empty_ = false;
    largest_ = number;
    set(number);
    return;
  }
  if (number > largest_) {
    const std::uint64_t advance = number - largest_;
    if (advance >= kSize) {
      bits_.fill(0);
    } else {
      for (std::uint64_t i = 1; i <= advance; ++i) clear(largest_ + i);
    }
    largest_ = number;
  }
  set(number);
}

namespace {

std::uint64_t reversed(std::uint64_t x) {
  x = (x >> 1 & 0x5555555555555555ull) | (x & 0x5555555555555555ull) << 1;
  x = (x >> 2 & 0x3333333333333333ull) | (x & 0x3333333333333333ull) << 2;
  x = (x >> 4 & 0x0F0F0F0F0F0F0F0Full) | (x & 0x0F0F0F0F0F0F0F0Full) << 4;
  x = (x >> 8 & 0x00FF00FF00FF00FFull) | (x & 0x00FF00FF00FF00FFull) << 8;
  x = (x >> 16 & 0x0000FFFF0000FFFFull) | (x & 0x0000FFFF0000FFFFull) << 16;
  return x >> 32 | x << 32;
}

}  // namespace

std::uint64_t ReplayWindow::seen_below(std::size_t word) const {
  // Bit i stands for largest − 1 − 64·word − i, down from `top`: the bitmap's 64 bits ending at top,
  // read upwards and reversed (an ACK carries 16 such words; bit by bit they were 4 % of a swarm's CPU).
  const std::uint64_t skip = 64 * static_cast<std::uint64_t>(word);
  if (empty_ || skip + 1 > largest_ || skip + 1 >= kSize) return 0;
  const std::uint64_t valid = std::min<std::uint64_t>({64, largest_ - skip, kSize - 1 - skip});
  const std::uint64_t top = largest_ - 1 - skip;
  const std::uint64_t low = (top + kSize - 63) % kSize;  // top − 63 in the ring
  const std::size_t at = low / 64, shift = low % 64;
  std::uint64_t up = bits_[at] >> shift;
  if (shift != 0) up |= bits_[(at + 1) % bits_.size()] << (64 - shift);
  const std::uint64_t mask = valid == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << valid) - 1;
  return reversed(up) & mask;
}

}  // namespace ncast::proto
