#pragma once
// A token bucket: at most `rate` units per second on average, `burst` at once. The limits may change
// as it runs (a paced session's rate follows the loss it measures).
#include <algorithm>
#include <chrono>

namespace ncast::server {

class TokenBucket {
 public:
  using Clock = std::chrono::steady_clock;
  // Full at first.
  TokenBucket(double rate, double burst) : TokenBucket(rate, burst, burst, Clock::now()) {}
  TokenBucket(double rate, double burst, double tokens, Clock::time_point now)
      : rate_(rate), burst_(burst), tokens_(tokens), last_(now) {}

  // From the next refill on; tokens already held stay until then.
  void set_limits(double rate, double burst) {
    rate_ = rate;
    burst_ = burst;
  }
  void refill(Clock::time_point now) {
    if (now > last_) tokens_ += std::chrono::duration<double>(now - last_).count() * rate_;
    tokens_ = std::min(burst_, tokens_);
    last_ = std::max(last_, now);
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
  double tokens() const { return tokens_; }

 private:
  double rate_, burst_, tokens_;
  Clock::time_point last_;
};

}  // namespace ncast::server
