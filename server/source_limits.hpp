#pragma once
// Sessions per source, so that no address takes all of --max-sessions: one address may hold
// per_address sessions, and its network (the /24 of an IPv4 address, the /64 of an IPv6 one: what one
// host or subscriber usually has) kNetworkFactor times as many. The threads of a ServerPool share one
// (a source's ports may hash to different threads), so it takes a lock, per JOIN and close only.
#include <cstddef>
#include <mutex>
#include <unordered_map>

#include "net/address.hpp"

namespace ncast::server {

class SourceLimits {
 public:
  static constexpr std::size_t kNetworkFactor = 4;

  // per_address 0: no limit.
  explicit SourceLimits(std::size_t per_address) : per_address_(per_address) {}

  // Counts a session from `from` unless its address or network holds its limit already; false then.
  bool try_add(const net::Address& from);
  // Whether try_add would succeed now (another thread may take the place first).
  bool has_room(const net::Address& from);
  // A session counted by try_add closed.
  void remove(const net::Address& from);
  // A session counted under `from` moved to `to` (its peer's address changed): counted there instead,
  // unless `to` holds its limit (a new port of the same address always fits); false then, and it stays
  // counted under `from`.
  bool move(const net::Address& from, const net::Address& to);
  std::size_t per_address() const { return per_address_; }
  std::size_t per_network() const { return per_address_ * kNetworkFactor; }

 private:
  bool add(const net::Address& from);  // try_add with mutex_ held
  std::size_t per_address_;
  std::mutex mutex_;
  // Keyed by the address without its port, and by its network's first address.
  std::unordered_map<net::Address, std::size_t, net::AddressHash> addresses_, networks_;
};

}  // namespace ncast::server
