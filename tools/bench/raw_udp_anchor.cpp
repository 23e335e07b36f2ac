#include "tools/bench/raw_udp_anchor.hpp"

#include <poll.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <random>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <vector>

#include "net/udp_pktinfo.hpp"
#include "net/udp_receive.hpp"
#include "net/udp_socket.hpp"
#include "server/server.hpp"

namespace ncast::bench {
namespace {

double thread_cpu_s() {
  timespec t{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// Receiving sockets, drained by a thread of their own until destroyed: `count` destinations, per_socket
// of them (distinct loopback addresses) on each socket bound to INADDR_ANY, or with per_socket 1 a
// socket on 127.0.0.1 each.
class Sinks {
 public:
  Sinks(std::size_t count, std::size_t per_socket) {
    const std::size_t sockets = (count + per_socket - 1) / per_socket;
    rlimit r{};
    ::getrlimit(RLIMIT_NOFILE, &r);
    if (r.rlim_cur < sockets + 256 && r.rlim_max >= sockets + 256) {
      r.rlim_cur = sockets + 256;
      ::setrlimit(RLIMIT_NOFILE, &r);
    }
    epoll_ = ::epoll_create1(EPOLL_CLOEXEC);
    for (std::size_t i = 0; i < sockets; ++i) {
      const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
      if (fd < 0) throw std::system_error(errno, std::generic_category(), "raw UDP anchor: socket");
      fds_.push_back(fd);
      // As the peers do: a GSO run arrives whole, and the sender is not charged for splitting it.
      net::enable_udp_gro(fd);
      const int size = static_cast<int>(std::min<std::size_t>(per_socket, 4096) << 19);
      if (::setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size) != 0)
        ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
      net::Address a = net::Address::parse(per_socket > 1 ? "0.0.0.0:0" : "127.0.0.1:0");
      sockaddr_storage ss{};
      const socklen_t len = a.to_sockaddr(ss);
      if (::bind(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0)
        throw std::system_error(errno, std::generic_category(), "raw UDP anchor: bind");
      socklen_t got = sizeof ss;
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &got);
      const net::Address bound = net::Address::from_sockaddr(reinterpret_cast<sockaddr*>(&ss));
      for (std::size_t k = 0; k < per_socket && addresses_.size() < count; ++k) {
        net::Address to = per_socket > 1 ? net::loopback_host(static_cast<std::uint32_t>(addresses_.size())) : bound;
        to.port = bound.port;
        addresses_.push_back(to);
      }
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.fd = fd;
      ::epoll_ctl(epoll_, EPOLL_CTL_ADD, fd, &ev);
    }
    drain_ = std::thread([this] { drain(); });
  }
  ~Sinks() {
    stop_ = true;
    drain_.join();
    for (int fd : fds_) ::close(fd);
    ::close(epoll_);
  }
  const std::vector<net::Address>& addresses() const { return addresses_; }

 private:
  void drain() {
    constexpr std::size_t kBatch = 32;
    std::vector<std::uint8_t> buf(kBatch * net::kGroMaxMessage);
    epoll_event events[64];
    while (!stop_) {
      const int n = ::epoll_wait(epoll_, events, 64, 20);
      for (int e = 0; e < n; ++e)
        while (net::receive_batch(events[e].data.fd, buf.data(), kBatch, [](auto, const auto&) {}).messages == kBatch) {
        }
    }
  }

  int epoll_ = -1;
  std::vector<int> fds_;
  std::vector<net::Address> addresses_;
  std::atomic<bool> stop_{false};
  std::thread drain_;
};

}  // namespace

RawUdpResult measure_raw_udp(std::size_t datagram, std::size_t destinations, std::size_t run, double seconds,
                             std::size_t per_socket) {
  if (datagram == 0 || destinations == 0 || run == 0 || !(seconds > 0))
    throw std::invalid_argument("raw UDP anchor: bad parameters");
  Sinks sinks(destinations, std::max<std::size_t>(per_socket, 1));
  boost::asio::io_context io;
  server::ServerConfig defaults;
  net::UdpSocket socket(io, net::Address::parse("127.0.0.1:0"), defaults.socket_buffer, datagram);
  std::vector<std::uint8_t> payload(datagram);
  std::mt19937_64 rng(7);
  for (auto& b : payload) b = static_cast<std::uint8_t>(rng());
  const int fd = socket.asio().native_handle();
  auto flush = [&] {
    while (!socket.flush()) {
      pollfd p{fd, POLLOUT, 0};
      ::poll(&p, 1, 10);
    }
  };
  // A short warm-up, then the measured time.
  RawUdpResult r;
  const auto& c = socket.counters();
  std::size_t dest = 0;
  for (int phase = 0; phase < 2; ++phase) {
    const double length = phase == 0 ? std::min(0.2, seconds / 4) : seconds;
    const auto start = std::chrono::steady_clock::now();
    const double cpu0 = thread_cpu_s();
    const std::uint64_t packets0 = c.packets_out, bytes0 = c.bytes_out;
    do {
      for (int burst = 0; burst < 64; ++burst) {
        for (std::size_t i = 0; i < run; ++i) {
          if (socket.full()) flush();
          auto slot = socket.slot();
          std::memcpy(slot.data(), payload.data(), datagram);
          socket.commit(datagram, sinks.addresses()[dest]);
        }
        dest = (dest + 1) % destinations;
      }
      flush();
    } while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < length);
    if (phase == 1) {
      r.cpu_s = thread_cpu_s() - cpu0;
      r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      r.packets = c.packets_out - packets0;
      r.bytes = c.bytes_out - bytes0;
    }
  }
  return r;
}

}  // namespace ncast::bench
