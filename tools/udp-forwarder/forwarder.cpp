#include "tools/udp-forwarder/forwarder.hpp"

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace ncast::tools {
namespace {

constexpr std::size_t kMaxDatagram = 65536;
constexpr std::size_t kMaxRetired = 64;  // old bindings still read (and dropped), oldest closed first

int open_socket(const net::Address& at) {
  const int fd = ::socket(at.family == 4 ? AF_INET : AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  sockaddr_storage storage{};
  const unsigned len = at.to_sockaddr(storage);
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&storage), len) != 0) {
    const std::string why = std::strerror(errno);
    if (fd >= 0) ::close(fd);
    throw std::runtime_error("cannot bind a UDP socket to " + at.to_string() + ": " + why);
  }
  int size = 4 << 20;
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
  return fd;
}

// One datagram waiting on fd, and its source; false when none is.
bool receive(int fd, std::vector<std::uint8_t>& bytes, net::Address& from) {
  bytes.resize(kMaxDatagram);
  sockaddr_storage storage{};
  socklen_t len = sizeof storage;
  const ssize_t n = ::recvfrom(fd, bytes.data(), bytes.size(), 0, reinterpret_cast<sockaddr*>(&storage), &len);
  if (n < 0) return false;
  bytes.resize(static_cast<std::size_t>(n));
  from = net::Address::from_sockaddr(reinterpret_cast<const sockaddr*>(&storage));
  return true;
}

void send_to(int fd, const net::Address& to, const std::vector<std::uint8_t>& bytes) {
  sockaddr_storage storage{};
  const unsigned len = to.to_sockaddr(storage);
  ::sendto(fd, bytes.data(), bytes.size(), 0, reinterpret_cast<const sockaddr*>(&storage), len);
}

// The address an upstream socket binds to: the listening address's family and host, any port.
net::Address any_port(const net::Address& like) {
  net::Address a = like;
  a.port = 0;
  return a;
}

}  // namespace

Forwarder::Forwarder(const ForwarderOptions& options)
    : options_(options), rng_(options.seed), delay_dice_(std::clamp(options.reorder, 0.0, 1.0)) {
  listen_fd_ = open_socket(options_.listen);
  sockaddr_storage storage{};
  socklen_t len = sizeof storage;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&storage), &len);
  port_ = net::Address::from_sockaddr(reinterpret_cast<const sockaddr*>(&storage)).port;
}

Forwarder::~Forwarder() {
  for (const Client& c : clients_) ::close(c.upstream);
  for (const int fd : retired_) ::close(fd);
  ::close(listen_fd_);
}

std::size_t Forwarder::client_for(const net::Address& from, Clock::time_point now) {
  for (std::size_t i = 0; i < clients_.size(); ++i)
    if (clients_[i].address == from) return i;
  clients_.push_back({from, open_socket(any_port(options_.listen)), now});
  return clients_.size() - 1;
}

void Forwarder::rebind_due(Clock::time_point now) {
  if (options_.rebind.count() == 0) return;
  for (Client& c : clients_) {
    if (now - c.bound_at < options_.rebind) continue;
    retired_.push_back(c.upstream);
    if (retired_.size() > kMaxRetired) {
      ::close(retired_.front());
      retired_.erase(retired_.begin());
    }
    c.upstream = open_socket(any_port(options_.listen));
    c.bound_at = now;
    ++counters_.rebinds;
  }
}

void Forwarder::send(std::size_t client, bool to_server, const std::vector<std::uint8_t>& bytes) {
  const Client& c = clients_[client];
  if (to_server) send_to(c.upstream, options_.server, bytes);
  else send_to(listen_fd_, c.address, bytes);
}

void Forwarder::forward(std::size_t client, bool to_server, std::vector<std::uint8_t> bytes, Clock::time_point now) {
  ++counters_.forwarded;
  if (!delay_dice_(rng_)) return send(client, to_server, bytes);
  ++counters_.delayed;
  held_.push_back({now + options_.delay, client, to_server, std::move(bytes)});
}

void Forwarder::release_due(Clock::time_point now) {
  // A datagram held across a rebinding leaves by the client's new socket, as it would behind a NAT.
  for (; !held_.empty() && held_.front().release <= now; held_.pop_front())
    send(held_.front().client, held_.front().to_server, held_.front().bytes);
}

void Forwarder::from_client(Clock::time_point now) {
  std::vector<std::uint8_t> bytes;
  net::Address from;
  while (receive(listen_fd_, bytes, from)) forward(client_for(from, now), true, std::move(bytes), now);
}

void Forwarder::from_server(std::size_t client, Clock::time_point now) {
  std::vector<std::uint8_t> bytes;
  net::Address from;
  while (receive(clients_[client].upstream, bytes, from))
    if (from == options_.server) forward(client, false, std::move(bytes), now);
}

int Forwarder::poll_timeout_ms(Clock::time_point now) const {
  int ms = 50;
  if (!held_.empty()) {
    const auto wait = std::chrono::ceil<std::chrono::milliseconds>(held_.front().release - now);
    ms = std::clamp(static_cast<int>(wait.count()), 0, ms);
  }
  return ms;
}

void Forwarder::run(const volatile bool& stop) {
  std::vector<pollfd> fds;
  std::vector<std::uint8_t> drain;
  while (!stop) {
    const auto before = Clock::now();
    fds.assign(1, {listen_fd_, POLLIN, 0});
    for (const Client& c : clients_) fds.push_back({c.upstream, POLLIN, 0});
    for (const int fd : retired_) fds.push_back({fd, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), poll_timeout_ms(before)) < 0 && errno != EINTR)
      throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
    const auto now = Clock::now();
    if (fds[0].revents) from_client(now);
    for (std::size_t i = 0; i < clients_.size() && i + 1 < fds.size(); ++i)
      if (fds[i + 1].revents) from_server(i, now);
    net::Address from;
    for (std::size_t i = clients_.size() + 1; i < fds.size(); ++i)
      while (fds[i].revents && receive(fds[i].fd, drain, from)) ++counters_.lost_to_old_ports;
    rebind_due(now);
    release_due(now);
  }
}

}  // namespace ncast::tools
