#pragma once
// What a long run tells its user: a progress bar on stderr when stderr is a terminal (never in logs
// or pipes), and sizes and rates in SI units (1 GB = 10^9 bytes, as ncast-bench reports them).
#include <chrono>
#include <cstdint>
#include <string>

namespace ncast::tools {

// "0 B", "999 B", "1.50 kB", "2.15 GB".
std::string format_bytes(std::uint64_t bytes);
// "0.42 s".
std::string format_seconds(double seconds);
// "1.23 GB/s" for bytes over seconds.
std::string format_rate(std::uint64_t bytes, double seconds);

class Progress {
 public:
  // Shows a bar only when enabled and stderr is a terminal.
  Progress(std::string label, std::uint64_t total, bool enabled);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Redraws at most ten times a second.
  void update(std::uint64_t done);
  // Removes the bar; returns the seconds since construction.
  double finish();
  double seconds() const;

 private:
  void draw(std::uint64_t done);
  std::string label_;
  std::uint64_t total_;
  bool shown_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

}  // namespace ncast::tools
