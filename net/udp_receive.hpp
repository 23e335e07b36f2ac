#pragma once
// Batched UDP receive (recvmmsg) with UDP GRO (Linux ≥ 5.0), for the server's sockets and the simulated
// peers'. A socket with UDP_GRO set may take a run of equal datagrams from one sender as one message,
// with their size in a control message: a GSO send that crossed loopback whole, or what the NIC's GRO
// merged. One receive and one wake-up then bring what would have been a paced burst of several, which
// is most of a receiver's cost per datagram; receive_batch splits such messages again.
#include <netinet/in.h>
#include <netinet/udp.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <utility>

#include "net/address.hpp"

#ifndef UDP_GRO
#define UDP_GRO 104
#endif

namespace ncast::net {

// A merged message is at most one IP datagram: receive into buffers this large, or it is truncated.
inline constexpr std::size_t kGroMaxMessage = 65536;
inline constexpr std::size_t kMaxReceiveBatch = 64;

// Best effort: false where the kernel has no UDP GRO (messages then carry one datagram each).
inline bool enable_udp_gro(int fd) {
  const int one = 1;
  return ::setsockopt(fd, IPPROTO_UDP, UDP_GRO, &one, sizeof one) == 0;
}

struct Received {
  std::size_t messages = 0;  // 0: nothing was waiting
  std::size_t datagrams = 0;
  std::size_t merged = 0;  // messages that carried several datagrams
};

namespace detail {

// One recvmmsg of at most `count` messages, each GRO run split again; with kDestination, also the IPv4
// address each message was sent to (IP_PKTINFO), and messages without it are dropped.
template <bool kDestination, class F>
Received receive(int fd, std::uint8_t* buffers, std::size_t count, F&& f) {
  count = std::min(count, kMaxReceiveBatch);
  constexpr std::size_t kControl =
      CMSG_SPACE(sizeof(int)) + (kDestination ? CMSG_SPACE(sizeof(in_pktinfo)) : std::size_t{0});
  mmsghdr msgs[kMaxReceiveBatch];
  iovec iovs[kMaxReceiveBatch];
  sockaddr_storage from[kMaxReceiveBatch];
  alignas(cmsghdr) char control[kMaxReceiveBatch][kControl];
  for (std::size_t i = 0; i < count; ++i) {
    iovs[i] = {buffers + i * kGroMaxMessage, kGroMaxMessage};
    std::memset(&msgs[i], 0, sizeof msgs[i]);
    msgs[i].msg_hdr.msg_iov = &iovs[i];
    msgs[i].msg_hdr.msg_iovlen = 1;
    msgs[i].msg_hdr.msg_name = &from[i];
    msgs[i].msg_hdr.msg_namelen = sizeof from[i];
    msgs[i].msg_hdr.msg_control = control[i];
    msgs[i].msg_hdr.msg_controllen = sizeof control[i];
  }
  Received r;
  const int got = ::recvmmsg(fd, msgs, static_cast<unsigned>(count), MSG_DONTWAIT, nullptr);
  if (got <= 0) return r;
  r.messages = static_cast<std::size_t>(got);
  for (std::size_t i = 0; i < r.messages; ++i) {
    const msghdr& h = msgs[i].msg_hdr;
    // A truncated control part may have lost the GRO segment size: the message cannot be split.
    if (h.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) continue;
    const auto addr = Address::from_sockaddr(reinterpret_cast<const sockaddr*>(&from[i]));
    if (addr.family == 0 || (kDestination && addr.family != 4)) continue;
    std::size_t segment = 0;
    Address to{};
    to.family = 0;
    for (const cmsghdr* c = CMSG_FIRSTHDR(&h); c != nullptr;
         c = CMSG_NXTHDR(const_cast<msghdr*>(&h), const_cast<cmsghdr*>(c))) {
      if (c->cmsg_level == IPPROTO_UDP && c->cmsg_type == UDP_GRO) {
        int size = 0;
        std::memcpy(&size, CMSG_DATA(c), sizeof size);
        segment = size > 0 ? static_cast<std::size_t>(size) : 0;
      } else if (kDestination && c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
        in_pktinfo info{};
        std::memcpy(&info, CMSG_DATA(c), sizeof info);
        to.family = 4;
        std::memcpy(to.ip.data(), &info.ipi_addr, 4);
      }
    }
    if (kDestination && to.family == 0) continue;
    const std::span<std::uint8_t> message{buffers + i * kGroMaxMessage, msgs[i].msg_len};
    if (segment == 0 || segment >= message.size()) segment = message.size();
    else ++r.merged;
    for (std::size_t at = 0; at < message.size(); at += segment) {
      const auto d = message.subspan(at, std::min(segment, message.size() - at));
      if constexpr (kDestination) f(d, addr, to);
      else f(d, addr);
      ++r.datagrams;
    }
  }
  return r;
}

}  // namespace detail

// One recvmmsg of at most `count` (≤ kMaxReceiveBatch) messages into consecutive buffers of
// kGroMaxMessage octets from `buffers`; f(datagram, from) for each datagram, in order.
template <class F>
Received receive_batch(int fd, std::uint8_t* buffers, std::size_t count, F&& f) {
  return detail::receive<false>(fd, buffers, count, std::forward<F>(f));
}

}  // namespace ncast::net
