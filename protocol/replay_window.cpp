#include "protocol/replay_window.hpp"

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

std::uint64_t ReplayWindow::seen_below(std::size_t word) const {
  std::uint64_t bits = 0;
  for (std::uint64_t i = 0; i < 64; ++i) {
    const std::uint64_t back = 1 + 64 * word + i;
    if (empty_ || back > largest_ || back >= kSize) break;
    if (test(largest_ - back)) bits |= std::uint64_t{1} << i;
  }
  return bits;
}

}  // namespace ncast::proto
