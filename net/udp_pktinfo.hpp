#pragma once
// One IPv4 UDP socket speaking for many local addresses (IP_PKTINFO): bound to INADDR_ANY and a port,
// it sends each datagram from the source address the caller names, and tells for each datagram it
// receives the address it was sent to. On Linux every 127/8 address is local (routed to lo), so one
// such socket carries the traffic of many loopback hosts: the simulated peers of a swarm share sockets
// and still look like distinct hosts to a server. As net/udp_receive.hpp, the receive is batched
// (recvmmsg) and splits GRO runs, which always have one destination (one flow).
#include <netinet/in.h>
#include <netinet/udp.h>
#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <utility>

#include "net/address.hpp"
#include "net/udp_receive.hpp"

namespace ncast::net {

// Loopback host n (n < kLoopbackHosts) of 127/8, never 127.0.0.1 nor the broadcast 127.255.255.255:
// consecutive n in different /24 networks (127.a.b.0/24), so that limits per network do not lump them
// together. Port 0.
inline constexpr std::uint32_t kLoopbackHosts = 253u << 16;
inline Address loopback_host(std::uint32_t n) {
  Address a;
  a.family = 4;
  a.ip[0] = 127;
  a.ip[1] = static_cast<std::uint8_t>(n >> 8);
  a.ip[2] = static_cast<std::uint8_t>(n);
  a.ip[3] = static_cast<std::uint8_t>(2 + (n >> 16) % 253);
  return a;
}

// False where the kernel refuses (then no datagram says where it was sent).
inline bool enable_destination_info(int fd) {
  const int one = 1;
  return ::setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof one) == 0;
}

// Names `from` (IPv4; its port is the socket's) as the source of message m, in `control` (at least
// CMSG_SPACE(sizeof(in_pktinfo)) octets, aligned for cmsghdr).
inline void set_source(msghdr& m, char* control, std::size_t size, const Address& from) {
  std::memset(control, 0, size);
  m.msg_control = control;
  m.msg_controllen = CMSG_SPACE(sizeof(in_pktinfo));
  cmsghdr* c = CMSG_FIRSTHDR(&m);
  c->cmsg_level = IPPROTO_IP;
  c->cmsg_type = IP_PKTINFO;
  c->cmsg_len = CMSG_LEN(sizeof(in_pktinfo));
  in_pktinfo info{};
  std::memcpy(&info.ipi_spec_dst, from.ip.data(), 4);
  std::memcpy(CMSG_DATA(c), &info, sizeof info);
}

// Sends d to `to` from the local IPv4 address `from` (its port is the socket's); the result of sendmsg.
inline long send_from(int fd, const Address& from, const Address& to, std::span<const std::uint8_t> d) {
  sockaddr_storage ss{};
  const socklen_t len = to.to_sockaddr(ss);
  iovec iov{const_cast<std::uint8_t*>(d.data()), d.size()};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(in_pktinfo))];
  msghdr h{};
  h.msg_name = &ss;
  h.msg_namelen = len;
  h.msg_iov = &iov;
  h.msg_iovlen = 1;
  set_source(h, control, sizeof control, from);
  return ::sendmsg(fd, &h, MSG_DONTWAIT);
}

// As receive_batch (net/udp_receive.hpp), for a socket with enable_destination_info: f(datagram, from,
// to) for each datagram, `to` the IPv4 address it was sent to (port 0: the socket's). A message
// without that information is dropped: it cannot be told whose it is.
template <class F>
Received receive_batch_to(int fd, std::uint8_t* buffers, std::size_t count, F&& f) {
  return detail::receive<detail::Extra::destination>(fd, buffers, count, std::forward<F>(f));
}

}  // namespace ncast::net
