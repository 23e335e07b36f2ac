#include "server/source_limits.hpp"

#include <algorithm>

namespace ncast::server {
namespace {

net::Address host_of(const net::Address& a) {
  net::Address h = a;
  h.port = 0;
  return h;
}

// ::ffff:a.b.c.d: an IPv4 peer of a dual-stack socket.
bool v4_mapped(const net::Address& a) {
  return a.family == 6 && a.ip[10] == 0xFF && a.ip[11] == 0xFF &&
         std::all_of(a.ip.begin(), a.ip.begin() + 10, [](std::uint8_t b) { return b == 0; });
}

net::Address network_of(const net::Address& a) {
  net::Address n = host_of(a);
  // A mapped IPv4 address's network is its /24 too, not the /64 every IPv4 peer shares.
  const std::size_t prefix_octets = a.family == 4 ? 3 : v4_mapped(a) ? 15 : 8;
  std::fill(n.ip.begin() + static_cast<long>(prefix_octets), n.ip.end(), std::uint8_t{0});
  return n;
}

void release(std::unordered_map<net::Address, std::size_t, net::AddressHash>& counts, const net::Address& key) {
  const auto it = counts.find(key);
  if (it == counts.end()) return;
  if (--it->second == 0) counts.erase(it);
}

}  // namespace

bool SourceLimits::try_add(const net::Address& from) {
  if (per_address_ == 0) return true;
  const std::lock_guard lock(mutex_);
  return add(from);
}

bool SourceLimits::move(const net::Address& from, const net::Address& to) {
  if (per_address_ == 0) return true;
  const std::lock_guard lock(mutex_);
  release(addresses_, host_of(from));
  release(networks_, network_of(from));
  if (add(to)) return true;
  add(from);  // its own place, freed a moment ago under the same lock
  return false;
}

bool SourceLimits::add(const net::Address& from) {
  const net::Address host = host_of(from), network = network_of(from);
  std::size_t& by_host = addresses_[host];
  std::size_t& by_network = networks_[network];
  if (by_host >= per_address() || by_network >= per_network()) {
    // Entries made by the look-up above, empty: gone again.
    if (by_host == 0) addresses_.erase(host);
    if (by_network == 0) networks_.erase(network);
    return false;
  }
  ++by_host;
  ++by_network;
  return true;
}

bool SourceLimits::has_room(const net::Address& from) {
  if (per_address_ == 0) return true;
  const std::lock_guard lock(mutex_);
  const auto host = addresses_.find(host_of(from));
  const auto network = networks_.find(network_of(from));
  return (host == addresses_.end() || host->second < per_address()) &&
         (network == networks_.end() || network->second < per_network());
}

void SourceLimits::remove(const net::Address& from) {
  if (per_address_ == 0) return;
  const std::lock_guard lock(mutex_);
  release(addresses_, host_of(from));
  release(networks_, network_of(from));
}

}  // namespace ncast::server
