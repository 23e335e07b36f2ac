#include "tools/udp-forwarder/forwarder.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <system_error>

namespace ncast::tools {
namespace {

constexpr std::size_t kMaxDatagram = 65536;
constexpr std::size_t kMaxRetired = 64;  // old bindings still read (and dropped), oldest closed first
constexpr int kMaxWaitMs = 50;

[[noreturn]] void fail(const std::string& what) { throw std::system_error(errno, std::generic_category(), what); }

int udp_socket(const net::Address& like) {
  const int fd = ::socket(like.family == 4 ? AF_INET : AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) fail("cannot open a UDP socket");
  // Room for bursts at a few hundred Mbit/s while this process waits for the CPU.
  const int buffer = 8 << 20;
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buffer, sizeof buffer);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buffer, sizeof buffer);
  return fd;
}

// One datagram waiting on fd, and its source; false when none is.
bool receive(int fd, std::vector<std::uint8_t>& bytes, net::Address& from) {
  bytes.resize(kMaxDatagram);
  sockaddr_storage sa{};
  socklen_t len = sizeof sa;
  const ssize_t n = ::recvfrom(fd, bytes.data(), bytes.size(), 0, reinterpret_cast<sockaddr*>(&sa), &len);
  if (n < 0) return false;
  bytes.resize(static_cast<std::size_t>(n));
  from = net::Address::from_sockaddr(reinterpret_cast<const sockaddr*>(&sa));
  return true;
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
  for (const Client& c : clients_) ::close(c.upstream);
  for (const int fd : retired_) ::close(fd);
  ::close(listen_fd_);
}

net::Address Forwarder::local() const {
  sockaddr_storage sa{};
  socklen_t len = sizeof sa;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&sa), &len);
  return net::Address::from_sockaddr(reinterpret_cast<const sockaddr*>(&sa));
}

void Forwarder::step() {
  // clients_ grows only in from_clients, after the upstream sockets polled are read: fds[i + 1] is
  // clients_[i]'s for i < polled.
  const std::size_t polled = clients_.size();
  std::vector<pollfd> fds{{listen_fd_, POLLIN, 0}};
  for (const Client& c : clients_) fds.push_back({c.upstream, POLLIN, 0});
  for (const int fd : retired_) fds.push_back({fd, POLLIN, 0});
  if (::poll(fds.data(), fds.size(), poll_timeout_ms(Clock::now())) < 0 && errno != EINTR) fail("poll");
  const auto now = Clock::now();
  for (std::size_t i = 0; i < polled; ++i)
    if (fds[i + 1].revents) from_server(i, now);
  std::vector<std::uint8_t> drain;
  net::Address from;
  for (std::size_t i = polled + 1; i < fds.size(); ++i)
    while (fds[i].revents && receive(fds[i].fd, drain, from)) ++counters_.lost_to_old_ports;
  if (fds[0].revents) from_clients(now);
  rebind_due(now);
  release_due(now);
}

int Forwarder::upstream_socket() const {
  // Connected: the kernel picks the source address and passes on only the server's datagrams.
  const int fd = udp_socket(options_.server);
  sockaddr_storage sa{};
  const auto len = options_.server.to_sockaddr(sa);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&sa), len) != 0) {
    const int e = errno;
    ::close(fd);
    errno = e;
    fail("cannot reach " + options_.server.to_string());
  }
  return fd;
}

std::size_t Forwarder::client_for(const net::Address& from, Clock::time_point now) {
  if (const auto it = client_of_.find(from); it != client_of_.end()) return it->second;
  clients_.push_back({from, upstream_socket(), now});
  client_of_.emplace(from, clients_.size() - 1);
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
    c.upstream = upstream_socket();
    c.bound_at = now;
    ++counters_.rebinds;
  }
}

void Forwarder::from_clients(Clock::time_point now) {
  std::vector<std::uint8_t> bytes;
  net::Address from;
  while (receive(listen_fd_, bytes, from))
    if (from.family != 0) pass(client_for(from, now), true, std::move(bytes), now);
}

void Forwarder::from_server(std::size_t client, Clock::time_point now) {
  std::vector<std::uint8_t> bytes;
  net::Address from;
  while (receive(clients_[client].upstream, bytes, from)) pass(client, false, std::move(bytes), now);
}

void Forwarder::pass(std::size_t client, bool up, std::vector<std::uint8_t> bytes, Clock::time_point now) {
  ++(up ? counters_.up : counters_.down);
  corrupt(bytes, up);
  const auto held = delay();
  if (held <= Clock::duration::zero()) return send(client, up, bytes);
  held_.push(Held{now + held, order_++, client, up, std::move(bytes)});
}

void Forwarder::corrupt(std::vector<std::uint8_t>& bytes, bool up) {
  if (options_.corrupt <= 0 || bytes.empty()) return;
  if (!std::bernoulli_distribution(options_.corrupt)(rng_)) return;
  const auto bit = std::uniform_int_distribution<std::size_t>(0, bytes.size() * 8 - 1)(rng_);
  bytes[bit / 8] ^= static_cast<std::uint8_t>(1U << (bit % 8));
  ++(up ? counters_.corrupted_up : counters_.corrupted_down);
}

Forwarder::Clock::duration Forwarder::delay() {
  double ms = options_.delay_ms;
  if (options_.jitter_ms > 0) ms += std::uniform_real_distribution<double>(-1, 1)(rng_) * options_.jitter_ms;
  if (options_.reorder > 0 && std::bernoulli_distribution(options_.reorder)(rng_)) {
    ms += options_.reorder_ms;
    ++counters_.reordered;
  }
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double, std::milli>(ms));
}

void Forwarder::send(std::size_t client, bool up, const std::vector<std::uint8_t>& bytes) {
  const Client& c = clients_[client];
  ssize_t sent = 0;
  if (up) {
    sent = ::send(c.upstream, bytes.data(), bytes.size(), 0);
  } else {
    sockaddr_storage sa{};
    const auto len = c.address.to_sockaddr(sa);
    sent = ::sendto(listen_fd_, bytes.data(), bytes.size(), 0, reinterpret_cast<const sockaddr*>(&sa), len);
  }
  if (sent < 0) ++counters_.send_failures;
}

void Forwarder::release_due(Clock::time_point now) {
  for (; !held_.empty() && held_.top().due <= now; held_.pop())
    send(held_.top().client, held_.top().up, held_.top().bytes);
}

int Forwarder::poll_timeout_ms(Clock::time_point now) const {
  if (held_.empty()) return kMaxWaitMs;
  const auto wait = std::chrono::ceil<std::chrono::milliseconds>(held_.top().due - now);
  return std::clamp(static_cast<int>(wait.count()), 0, kMaxWaitMs);
}

}  // namespace ncast::tools
