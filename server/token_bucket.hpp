#pragma once
// A token bucket: at most `rate` units per second on average, `burst` at once.
#include <algorithm>
#include <chrono>

namespace ncast::server {

class TokenBucket {
 public:
  using Clock = std::chrono::steady_clock;
  TokenBucket(double rate, double burst) : rate_(rate), burst_(burst), tokens_(burst), last_(Clock::now()) {}

  void refill(Clock::time_point now) {
    if (now <= last_) return;
    tokens_ = std::min(burst_, tokens_ + std::chrono::duration<double>(now - last_).count() * rate_);
    last_ = now;
  }
  bool take(Clock::time_point now, double amount = 1) {
    refill(now);
    if (tokens_ < amount) return false;
    tokens_ -= amount;
    return true;
  }
  bool available(double amount) const { return tokens_ >= amount; }
  void spend(double amount) { tokens_ -= amount; }
  double rate() const { return rate_; }

 private:
  double rate_, burst_, tokens_;
  Clock::time_point last_;
};

}  // namespace ncast::server
