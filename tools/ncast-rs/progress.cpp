#include "tools/ncast-rs/progress.hpp"

#include <unistd.h>

#include <cstdio>

namespace ncast::tools {

std::string format_bytes(std::uint64_t bytes) {
  if (bytes < 1000) return std::to_string(bytes) + " B";
  static constexpr const char* kUnits[] = {"kB", "MB", "GB", "TB", "PB", "EB"};
  double v = static_cast<double>(bytes) / 1000;
  int u = 0;
  while (v >= 1000 && u < 5) {
    v /= 1000;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f %s", v < 10 ? 2 : v < 100 ? 1 : 0, v, kUnits[u]);
  return buf;
}

std::string format_seconds(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f s", seconds);
  return buf;
}

std::string format_rate(std::uint64_t bytes, double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GB/s", seconds > 0 ? static_cast<double>(bytes) / seconds / 1e9 : 0.0);
  return buf;
}

Progress::Progress(std::string label, std::uint64_t total, bool enabled)
    : label_(std::move(label)),
      total_(total),
      shown_(enabled && ::isatty(STDERR_FILENO) == 1),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

Progress::~Progress() {
  if (drawn_) std::fputs("\r\033[K", stderr);
}

double Progress::seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void Progress::update(std::uint64_t done) {
  if (!shown_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  draw(done);
}

void Progress::draw(std::uint64_t done) {
  constexpr int kWidth = 30;
  const double fraction = total_ ? static_cast<double>(done) / static_cast<double>(total_) : 1.0;
  const int filled = static_cast<int>(fraction * kWidth);
  std::string bar(static_cast<std::size_t>(filled), '#');
  bar.resize(kWidth, '.');
  std::fprintf(stderr, "\r\033[K%s [%s] %3d%%  %s / %s  %s", label_.c_str(), bar.c_str(),
               static_cast<int>(fraction * 100), format_bytes(done).c_str(), format_bytes(total_).c_str(),
               format_rate(done, seconds()).c_str());
  std::fflush(stderr);
  drawn_ = true;
}

double Progress::finish() {
  if (drawn_) {
    std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
    drawn_ = false;
  }
  return seconds();
}

}  // namespace ncast::tools
