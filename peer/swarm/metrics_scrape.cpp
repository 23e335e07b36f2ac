#include "peer/swarm/metrics_scrape.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <sstream>

namespace ncast::swarm {
namespace {

using Deadline = std::chrono::steady_clock::time_point;
constexpr std::size_t kMaxResponse = 16u << 20;  // a larger answer is not a server's /metrics

// True when fd is ready for events before the deadline.
bool wait_for(int fd, short events, Deadline end) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now()).count();
  if (left <= 0) return false;
  pollfd p{fd, events, 0};
  return ::poll(&p, 1, static_cast<int>(left)) == 1;
}

bool connect_before(int fd, const net::Address& address, Deadline end) {
  sockaddr_storage ss{};
  const socklen_t len = address.to_sockaddr(ss);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0 && errno != EINPROGRESS) return false;
  int error = 0;
  socklen_t elen = sizeof error;
  return wait_for(fd, POLLOUT, end) && ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &elen) == 0 && error == 0;
}

// Everything the server sent, once it closed the connection (HTTP/1.0); nullopt when it did not by the
// deadline, failed, or sent too much.
std::optional<std::string> read_until_closed(int fd, Deadline end) {
  std::string response;
  char buf[8192];
  while (wait_for(fd, POLLIN, end)) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n == 0) return response;
    if (n < 0) return std::nullopt;
    response.append(buf, static_cast<std::size_t>(n));
    if (response.size() > kMaxResponse) return std::nullopt;
  }
  return std::nullopt;
}

std::optional<std::string> get_metrics(int fd, const net::Address& address, Deadline end) {
  if (!connect_before(fd, address, end)) return std::nullopt;
  const std::string request = "GET /metrics HTTP/1.0\r\nHost: " + address.to_string() + "\r\n\r\n";
  if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(request.size()))
    return std::nullopt;
  return read_until_closed(fd, end);
}

// The body of a 200 answer; nullopt for any other.
std::optional<std::string> ok_body(const std::string& response) {
  const auto body = response.find("\r\n\r\n");
  const bool status_ok = response.compare(0, 12, "HTTP/1.0 200") == 0 || response.compare(0, 12, "HTTP/1.1 200") == 0;
  if (body == std::string::npos || !status_ok) return std::nullopt;
  return response.substr(body + 4);
}

// Prometheus text: "series value" lines, '#' comments; nullopt when a value is not a number.
std::optional<std::map<std::string, double>> parse_metrics(const std::string& body) {
  std::map<std::string, double> out;
  std::istringstream lines(body);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    const auto sp = line.rfind(' ');
    if (sp == std::string::npos) continue;
    try {
      out[line.substr(0, sp)] = std::stod(line.substr(sp + 1));
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  return out;
}

}  // namespace

std::optional<std::map<std::string, double>> scrape_metrics(const net::Address& address, int timeout_ms) {
  const int fd = ::socket(address.family == 4 ? AF_INET : AF_INET6, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return std::nullopt;
  const Deadline end = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  const std::optional<std::string> response = get_metrics(fd, address, end);
  ::close(fd);
  if (!response) return std::nullopt;
  const std::optional<std::string> body = ok_body(*response);
  if (!body) return std::nullopt;
  return parse_metrics(*body);
}

}  // namespace ncast::swarm
