#include "peer/swarm/metrics_scrape.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <sstream>

namespace ncast::swarm {

std::optional<std::map<std::string, double>> scrape_metrics(const net::Address& address, int timeout_ms) {
  const int fd = ::socket(address.family == 4 ? AF_INET : AF_INET6, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return std::nullopt;
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  auto wait = [&](short events) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now()).count();
    if (left <= 0) return false;
    pollfd p{fd, events, 0};
    return ::poll(&p, 1, static_cast<int>(left)) == 1;
  };
  sockaddr_storage ss{};
  const socklen_t len = address.to_sockaddr(ss);
  std::string response;
  bool ok = false;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&ss), len) == 0 || errno == EINPROGRESS) {
    int error = 0;
    socklen_t elen = sizeof error;
    if (wait(POLLOUT) && ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &elen) == 0 && error == 0) {
      const std::string request = "GET /metrics HTTP/1.0\r\nHost: " + address.to_string() + "\r\n\r\n";
      if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(request.size())) {
        char buf[8192];
        while (wait(POLLIN)) {
          const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
          if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
          if (n <= 0) {
            ok = n == 0;
            break;
          }
          response.append(buf, static_cast<std::size_t>(n));
          if (response.size() > (16u << 20)) break;
        }
      }
    }
  }
  ::close(fd);
  const auto body = response.find("\r\n\r\n");
  const bool status_ok = response.compare(0, 12, "HTTP/1.0 200") == 0 || response.compare(0, 12, "HTTP/1.1 200") == 0;
  if (!ok || body == std::string::npos || !status_ok) return std::nullopt;
  std::map<std::string, double> out;
  std::istringstream lines(response.substr(body + 4));
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

}  // namespace ncast::swarm
