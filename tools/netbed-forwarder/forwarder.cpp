#include "tools/netbed-forwarder/forwarder.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <system_error>

namespace ncast::netbed {
namespace {

constexpr std::size_t kMaxDatagram = 65536;

[[noreturn]] void fail(const std::string& what) { throw std::system_error(errno, std::generic_category(), what); }

int udp_socket(const net::Address& like) {
  const int fd = ::socket(like.family == 4 ? AF_INET : AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) fail("cannot open a UDP socket");
  // Room for bursts at a few hundred Mbit/s while this process waits for the CPU.
  const int buffer = 8 << 20;
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buffer, sizeof buffer);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buffer, sizeof buffer);
  return fd;
}

}  // namespace

Forwarder::Forwarder(const ForwarderOptions& options) : options_(options), rng_(options.seed) {
  listen_fd_ = udp_socket(options_.listen);
  sockaddr_storage sa{};
  const auto len = options_.listen.to_sockaddr(sa);
  if (::bind(listen_fd_, reinterpret_cast<const sockaddr*>(&sa), len) != 0) {
    const int e = errno;
    ::close(listen_fd_);
    errno = e;
    fail("cannot listen on " + options_.listen.to_string());
  }
}

Forwarder::~Forwarder() {
  for (const auto& [fd, peer] : peer_of_) ::close(fd);
  ::close(listen_fd_);
}

double Forwarder::now_ms() const {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void Forwarder::step() {
  std::vector<pollfd> fds{{listen_fd_, POLLIN, 0}};
  for (const auto& [fd, peer] : peer_of_) fds.push_back({fd, POLLIN, 0});
  double wait_ms = 200;
  if (!held_.empty()) wait_ms = std::min(wait_ms, std::max(0.0, held_.top().due_ms - now_ms()));
  if (::poll(fds.data(), fds.size(), static_cast<int>(wait_ms)) < 0 && errno != EINTR) fail("poll");
  for (const auto& p : fds) {
    if (!(p.revents & POLLIN)) continue;
    if (p.fd == listen_fd_) {
      from_peers();
    } else {
      from_server(p.fd, peer_of_.at(p.fd));
    }
  }
  release_due();
}

void Forwarder::from_peers() {
  std::vector<std::uint8_t> buffer(kMaxDatagram);
  for (;;) {
    sockaddr_storage from{};
    socklen_t from_len = sizeof from;
    const auto n = ::recvfrom(listen_fd_, buffer.data(), buffer.size(), MSG_DONTWAIT,
                              reinterpret_cast<sockaddr*>(&from), &from_len);
    if (n < 0) return;
    const auto peer = net::Address::from_sockaddr(reinterpret_cast<const sockaddr*>(&from));
    if (peer.family == 0) continue;
    pass(upstream_for(peer), net::Address{.family = 0}, {buffer.begin(), buffer.begin() + n}, true);
  }
}

void Forwarder::from_server(int fd, const net::Address& peer) {
  std::vector<std::uint8_t> buffer(kMaxDatagram);
  for (;;) {
    const auto n = ::recv(fd, buffer.data(), buffer.size(), MSG_DONTWAIT);
    if (n < 0) return;
    pass(listen_fd_, peer, {buffer.begin(), buffer.begin() + n}, false);
  }
}

int Forwarder::upstream_for(const net::Address& peer) {
  if (const auto it = upstream_.find(peer); it != upstream_.end()) return it->second;
  const int fd = udp_socket(options_.server);
  sockaddr_storage sa{};
  const auto len = options_.server.to_sockaddr(sa);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&sa), len) != 0)
    fail("cannot reach " + options_.server.to_string());
  upstream_.emplace(peer, fd);
  peer_of_.emplace(fd, peer);
  return fd;
}

void Forwarder::pass(int fd, const net::Address& to, std::vector<std::uint8_t> bytes, bool up) {
  ++(up ? counters_.up : counters_.down);
  std::uniform_real_distribution<double> unit(0, 1);
  if (!bytes.empty() && unit(rng_) < options_.corrupt) {
    std::uniform_int_distribution<std::size_t> bit(0, bytes.size() * 8 - 1);
    const auto b = bit(rng_);
    bytes[b / 8] ^= static_cast<std::uint8_t>(1U << (b % 8));
    ++(up ? counters_.corrupted_up : counters_.corrupted_down);
  }
  const double delay = options_.delay_ms + options_.jitter_ms * (2 * unit(rng_) - 1);
  if (delay <= 0) return send(fd, to, bytes);
  held_.push(Held{now_ms() + delay, order_++, fd, to, std::move(bytes)});
}

void Forwarder::send(int fd, const net::Address& to, const std::vector<std::uint8_t>& bytes) {
  ssize_t sent = 0;
  if (to.family == 0) {
    sent = ::send(fd, bytes.data(), bytes.size(), MSG_DONTWAIT);
  } else {
    sockaddr_storage sa{};
    const auto len = to.to_sockaddr(sa);
    sent = ::sendto(fd, bytes.data(), bytes.size(), MSG_DONTWAIT, reinterpret_cast<const sockaddr*>(&sa), len);
  }
  if (sent < 0) ++counters_.send_failures;
}

void Forwarder::release_due() {
  const double now = now_ms();
  while (!held_.empty() && held_.top().due_ms <= now) {
    send(held_.top().fd, held_.top().to, held_.top().bytes);
    held_.pop();
  }
}

}  // namespace ncast::netbed
