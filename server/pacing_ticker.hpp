#pragma once
// The scheduler's timer: one expiry at a time like Asio's steady_timer, or a tick every `period` while
// wake-ups are dense. Asio keeps its timers on one timerfd that it sets again after every expiry and
// every earlier deadline, and in a virtual machine each setting reprograms the host's timer (8,000 calls
// in 3 s at 500 peers on the 2-core VM). A periodic timerfd of its own fires on every grid point with no
// call to set it, until the wake-ups thin out: 6-18 % less server CPU per datagram there
// (bench/results/2026-11-27-input-on-the-timer.md).
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>

#include <chrono>
#include <cstdint>
#include <functional>

namespace ncast::server {

class PacingTicker {
 public:
  using Clock = std::chrono::steady_clock;
  using TimePoint = Clock::time_point;

  // fire() runs on the io_context's thread at each expiry.
  PacingTicker(boost::asio::io_context& io, std::function<void()> fire);
  ~PacingTicker();
  PacingTicker(const PacingTicker&) = delete;
  PacingTicker& operator=(const PacingTicker&) = delete;

  // Fire once at `at`; with `every` > 0, at `at` and every `every` after it until set otherwise.
  // TimePoint::max(): not at all. Setting the same again costs nothing.
  void set(TimePoint at, std::chrono::nanoseconds every = std::chrono::nanoseconds::zero());
  bool ticking() const { return every_ > std::chrono::nanoseconds::zero(); }
  // The one expiry when not ticking (max() when none).
  TimePoint at() const { return at_; }
  void cancel();

 private:
  void wait();

  boost::asio::posix::stream_descriptor fd_;
  std::function<void()> fire_;
  TimePoint at_ = TimePoint::max();
  std::chrono::nanoseconds every_{0};
  std::uint64_t expirations_ = 0;
  bool waiting_ = false;
};

}  // namespace ncast::server
