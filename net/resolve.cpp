#include "net/resolve.hpp"

#include <netdb.h>
#include <sys/socket.h>

#include <memory>
#include <stdexcept>

namespace ncast::net {

namespace {

std::string quoted(std::string_view what, const std::string& text) { return std::string(what) + " '" + text + "'"; }

// The first IPv4 answer, else the first IPv6 one; family 0 when there is neither.
Address pick(const addrinfo* list, std::uint16_t port) {
  Address six;
  six.family = 0;
  for (const addrinfo* ai = list; ai != nullptr; ai = ai->ai_next) {
    Address a = Address::from_sockaddr(ai->ai_addr);
    a.port = port;
    if (a.family == 4) return a;
    if (a.family == 6 && six.family == 0) six = a;
  }
  return six;
}

}  // namespace

Address resolve(const std::string& text, std::string_view what) {
  const auto numeric = Address::parse(text);
  if (numeric.family != 0) return numeric;
  const auto split = split_host_port(text);
  if (!split || split->host.empty())
    throw std::invalid_argument(quoted(what, text) +
                                " is not HOST:PORT (e.g. 127.0.0.1:7700, [::1]:7700, localhost:7700)");
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  const int rc = getaddrinfo(split->host.c_str(), nullptr, &hints, &found);
  const std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> owned(found, &freeaddrinfo);
  const std::string cannot = quoted(what, text) + ": cannot resolve '" + split->host + "': ";
  if (rc != 0) throw std::invalid_argument(cannot + gai_strerror(rc));
  const Address a = pick(found, split->port);
  if (a.family == 0) throw std::invalid_argument(cannot + "no IPv4 or IPv6 address");
  return a;
}

}  // namespace ncast::net
