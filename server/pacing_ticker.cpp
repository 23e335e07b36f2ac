#include "server/pacing_ticker.hpp"

#include <sys/timerfd.h>
#include <unistd.h>

#include <boost/asio/buffer.hpp>

#include <cerrno>
#include <system_error>

namespace ncast::server {
namespace {

timespec to_timespec(std::chrono::nanoseconds d) {
  const auto s = std::chrono::duration_cast<std::chrono::seconds>(d);
  return {static_cast<time_t>(s.count()), static_cast<long>((d - s).count())};
}

int make_timerfd() {
  // steady_clock is CLOCK_MONOTONIC on Linux: deadlines go to the kernel as they are.
  const int fd = ::timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "timerfd_create");
  return fd;
}

}  // namespace

PacingTicker::PacingTicker(boost::asio::io_context& io, std::function<void()> fire)
    : fd_(io, make_timerfd()), fire_(std::move(fire)) {}

PacingTicker::~PacingTicker() = default;

void PacingTicker::set(TimePoint at, std::chrono::nanoseconds every) {
  if (every < std::chrono::nanoseconds::zero()) every = std::chrono::nanoseconds::zero();
  if (at == TimePoint::max()) return cancel();
  // Ticking on, on the same period: every grid point fires already.
  if (every > std::chrono::nanoseconds::zero() && every == every_) return;
  if (every == every_ && at == at_) return;
  itimerspec spec{};
  // A deadline already past fires at once: the kernel takes 0 for "disarm", so the earliest is 1 ns.
  const auto since_epoch = std::chrono::duration_cast<std::chrono::nanoseconds>(at.time_since_epoch());
  spec.it_value = to_timespec(std::max(since_epoch, std::chrono::nanoseconds(1)));
  spec.it_interval = to_timespec(every);
  if (::timerfd_settime(fd_.native_handle(), TFD_TIMER_ABSTIME, &spec, nullptr) != 0)
    throw std::system_error(errno, std::generic_category(), "timerfd_settime");
  at_ = every > std::chrono::nanoseconds::zero() ? TimePoint::max() : at;
  every_ = every;
  wait();
}

void PacingTicker::cancel() {
  if (at_ == TimePoint::max() && every_ == std::chrono::nanoseconds::zero()) return;  // nothing armed
  const itimerspec off{};
  ::timerfd_settime(fd_.native_handle(), 0, &off, nullptr);
  at_ = TimePoint::max();
  every_ = std::chrono::nanoseconds::zero();
}

void PacingTicker::wait() {
  if (waiting_) return;
  waiting_ = true;
  fd_.async_read_some(boost::asio::buffer(&expirations_, sizeof expirations_),
                      [this](const boost::system::error_code& ec, std::size_t) {
                        waiting_ = false;
                        if (ec) return;  // closed
                        // The expiry read may be of an earlier setting than the one in force (set again
                        // before this ran): a deadline still ahead stays armed, and fire() runs early,
                        // which costs the scheduler nothing.
                        if (every_ == std::chrono::nanoseconds::zero() && Clock::now() >= at_) at_ = TimePoint::max();
                        if (at_ != TimePoint::max() || every_ > std::chrono::nanoseconds::zero()) wait();
                        fire_();
                      });
}

}  // namespace ncast::server
