#pragma once
// A UDP peer address as the protocol sees it (family, octets, port), independent of the socket API;
// the token binds to it and sessions are keyed by it.
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

struct sockaddr;
struct sockaddr_storage;

namespace ncast::net {

struct Address {
  std::uint8_t family = 4;            // 4 or 6
  std::array<std::uint8_t, 16> ip{};  // IPv4 uses the first 4 octets
  std::uint16_t port = 0;

  std::size_t ip_size() const { return family == 4 ? 4 : 16; }
  bool operator==(const Address&) const = default;
  std::string to_string() const;  // "127.0.0.1:5000", "[::1]:5000"

  // nullopt-like: family 0 for anything but AF_INET/AF_INET6.
  static Address from_sockaddr(const sockaddr* sa);
  // Fills storage; returns the sockaddr length.
  unsigned to_sockaddr(sockaddr_storage& storage) const;
  // "host:port" with a numeric host ("127.0.0.1:9000", "[::1]:9000"); family 0 if it does not parse.
  static Address parse(const std::string& text);
  bool is_loopback() const;
};

// "host:port" cut at the port's colon, the brackets of "[v6]:port" taken off; nullopt if malformed or
// the port is not 0..65535.
struct HostPort {
  std::string host;
  std::uint16_t port = 0;
};
std::optional<HostPort> split_host_port(const std::string& text);

struct AddressHash {
  std::size_t operator()(const Address& a) const;
};

}  // namespace ncast::net
