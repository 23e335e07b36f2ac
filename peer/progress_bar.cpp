#include "peer/progress_bar.hpp"

#include <algorithm>
#include <cstdio>

namespace ncast::peer {

using namespace std::chrono_literals;

void ProgressBar::update(TimePoint now, TimePoint started) {
  if (now - last_ <= 200ms) return;
  last_ = now;
  const auto& s = receiver_.stats();
  const std::uint32_t total = receiver_.known(), start = receiver_.adopted() ? receiver_.params().start_segment : 0;
  const std::uint32_t done = receiver_.next_needed() - std::min(receiver_.next_needed(), start);
  const std::uint32_t of = total > start ? total - start : 0;
  const double frac = of ? static_cast<double>(done) / of : 0.0;
  const int width = 30, filled = static_cast<int>(frac * width);
  const double rate = s.bytes_written / std::max(1e-3, std::chrono::duration<double>(now - started).count()) / 1e6;
  std::fprintf(stderr, "\r%s [%.*s%*s] %3.0f%% %u/%u%s segments %.2f MB/s ", stream_.c_str(), filled,
               "##############################", width - filled, "", 100 * frac, done, of,
               receiver_.final_seen() ? "" : "+", rate);
  std::fflush(stderr);
}

void ProgressBar::finish() { std::fputc('\n', stderr); }

}  // namespace ncast::peer
