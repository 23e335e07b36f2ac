#pragma once
// The value of an address option, "HOST:PORT", where HOST may be a name: every program's --server,
// --listen, --relay and --metrics take it.
#include <string>
#include <string_view>

#include "net/address.hpp"

namespace ncast::net {

// A numeric host ("127.0.0.1:7700", "[::1]:7700") is taken as it is; a name goes through the system
// resolver (getaddrinfo: /etc/hosts, then DNS). A name with IPv4 and IPv6 addresses gives its first
// IPv4 one, the family servers listen on by default, so that `localhost` means the same to a server
// and its peers on every host; "[::1]:PORT" or an IPv6-only name gives IPv6. Throws
// std::invalid_argument naming the option (`what`, e.g. "--server") and the text when the text is not
// HOST:PORT or its name does not resolve.
Address resolve(const std::string& text, std::string_view what);

}  // namespace ncast::net
