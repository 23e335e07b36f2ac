#include "peer/swarm/ready_set.hpp"

#include <sys/epoll.h>

#include <cerrno>
#include <system_error>

namespace ncast::swarm {

namespace {

int new_epoll() {
  const int fd = ::epoll_create1(EPOLL_CLOEXEC);
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "swarm: epoll_create1");
  return fd;
}

}  // namespace

ReadySet::ReadySet(boost::asio::io_context& io) : watch_(io, new_epoll()) { arm(); }

void ReadySet::add(int fd, Readable& target) {
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.ptr = &target;
  if (::epoll_ctl(watch_.native_handle(), EPOLL_CTL_ADD, fd, &ev) != 0)
    throw std::system_error(errno, std::generic_category(), "swarm: epoll_ctl ADD");
}

void ReadySet::remove(int fd) {
  epoll_event ev{};
  ::epoll_ctl(watch_.native_handle(), EPOLL_CTL_DEL, fd, &ev);
}

void ReadySet::close() {
  closed_ = true;
  boost::system::error_code ignore;
  watch_.cancel(ignore);
}

void ReadySet::arm() {
  watch_.async_wait(boost::asio::posix::descriptor_base::wait_read, [this](const boost::system::error_code& ec) {
    if (ec || closed_) return;
    constexpr int kEvents = 256;
    epoll_event events[kEvents];
    const int n = ::epoll_wait(watch_.native_handle(), events, kEvents, 0);
    for (int i = 0; i < n && !closed_; ++i) static_cast<Readable*>(events[i].data.ptr)->on_readable();
    // More than kEvents ready: the set is still readable, and the next wait reports it at once.
    arm();
  });
}

}  // namespace ncast::swarm
