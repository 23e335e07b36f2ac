#include "net/address.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>

namespace ncast::net {

std::string Address::to_string() const {
  char buf[INET6_ADDRSTRLEN] = "?";
  inet_ntop(family == 4 ? AF_INET : AF_INET6, ip.data(), buf, sizeof buf);
  std::string out;
  if (family == 6) out += '[';
  out += buf;
  if (family == 6) out += ']';
  out += ':';
  out += std::to_string(port);
  return out;
}

Address Address::from_sockaddr(const sockaddr* sa) {
  Address a;
  if (sa->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(sa);
    a.family = 4;
    std::memcpy(a.ip.data(), &in->sin_addr, 4);
    a.port = ntohs(in->sin_port);
  } else if (sa->sa_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(sa);
    a.family = 6;
    std::memcpy(a.ip.data(), &in6->sin6_addr, 16);
    a.port = ntohs(in6->sin6_port);
  } else {
    a.family = 0;
  }
  return a;
}

unsigned Address::to_sockaddr(sockaddr_storage& storage) const {
  std::memset(&storage, 0, sizeof storage);
  if (family == 4) {
    auto* in = reinterpret_cast<sockaddr_in*>(&storage);
    in->sin_family = AF_INET;
    in->sin_port = htons(port);
    std::memcpy(&in->sin_addr, ip.data(), 4);
    return sizeof(sockaddr_in);
  }
  auto* in6 = reinterpret_cast<sockaddr_in6*>(&storage);
  in6->sin6_family = AF_INET6;
  in6->sin6_port = htons(port);
  std::memcpy(&in6->sin6_addr, ip.data(), 16);
  return sizeof(sockaddr_in6);
}

std::optional<HostPort> split_host_port(const std::string& text) {
  std::string host, port;
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':') return std::nullopt;
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    const auto colon = text.rfind(':');
    if (colon == std::string::npos) return std::nullopt;
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (host.find(':') != std::string::npos) return std::nullopt;  // IPv6 needs brackets: [::1]:80
  }
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  const unsigned long p = std::stoul(port);
  if (p > 65535) return std::nullopt;
  return HostPort{std::move(host), static_cast<std::uint16_t>(p)};
}

Address Address::parse(const std::string& text) {
  Address out;
  out.family = 0;
  const auto split = split_host_port(text);
  if (!split) return out;
  if (inet_pton(AF_INET, split->host.c_str(), out.ip.data()) == 1) {
    out.family = 4;
  } else if (inet_pton(AF_INET6, split->host.c_str(), out.ip.data()) == 1) {
    out.family = 6;
  } else {
    return out;
  }
  out.port = split->port;
  return out;
}

bool Address::is_loopback() const {
  if (family == 4) return ip[0] == 127;
  static constexpr std::array<std::uint8_t, 16> kLoop6{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  if (family == 6 && ip == kLoop6) return true;
  // IPv4-mapped 127/8
  return family == 6 && ip[10] == 0xFF && ip[11] == 0xFF && ip[12] == 127 &&
         std::all_of(ip.begin(), ip.begin() + 10, [](std::uint8_t b) { return b == 0; });
}

std::size_t AddressHash::operator()(const Address& a) const {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a
  auto mix = [&h](std::uint8_t b) { h = (h ^ b) * 1099511628211ull; };
  mix(a.family);
  for (std::size_t i = 0; i < a.ip_size(); ++i) mix(a.ip[i]);
  mix(static_cast<std::uint8_t>(a.port >> 8));
  mix(static_cast<std::uint8_t>(a.port));
  return h;
}

}  // namespace ncast::net
