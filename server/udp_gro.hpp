#pragma once
// UDP GRO on receive (Linux ≥ 5.0). A socket with UDP_GRO set may take a run of equal datagrams from
// one sender as one message, with their size in a control message: a GSO send that crossed loopback
// whole, or what the NIC's GRO merged. One receive and one wake-up then bring what would have been a
// paced burst of several, which is most of a receiver's cost per datagram. These helpers turn it on
// and split such a message back into the datagrams it carries.
#include <netinet/in.h>
#include <netinet/udp.h>
#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#ifndef UDP_GRO
#define UDP_GRO 104
#endif

namespace ncast::server {

// Room for the control message a GRO receive may bring; give each message this much.
inline constexpr std::size_t kGroControlSpace = CMSG_SPACE(sizeof(int));
// A merged message is at most one IP datagram: receive into buffers this large, or it is truncated.
inline constexpr std::size_t kGroMaxMessage = 65536;

// Best effort: false where the kernel has no UDP GRO (messages then carry one datagram each).
inline bool enable_udp_gro(int fd) {
  const int one = 1;
  return ::setsockopt(fd, IPPROTO_UDP, UDP_GRO, &one, sizeof one) == 0;
}

// The size of the datagrams a received message carries; 0 when it carries one.
inline std::size_t gro_segment_size(const msghdr& h) {
  for (const cmsghdr* c = CMSG_FIRSTHDR(&h); c != nullptr; c = CMSG_NXTHDR(const_cast<msghdr*>(&h), const_cast<cmsghdr*>(c))) {
    if (c->cmsg_level != IPPROTO_UDP || c->cmsg_type != UDP_GRO) continue;
    int size = 0;
    std::memcpy(&size, CMSG_DATA(c), sizeof size);
    return size > 0 ? static_cast<std::size_t>(size) : 0;
  }
  return 0;
}

// Calls f on each datagram of a message whose datagrams are `segment` octets (the last may be shorter).
template <class F>
void for_each_datagram(std::span<std::uint8_t> message, std::size_t segment, F&& f) {
  if (segment == 0 || segment >= message.size()) return f(message);
  for (std::size_t at = 0; at < message.size(); at += segment)
    f(message.subspan(at, std::min(segment, message.size() - at)));
}

}  // namespace ncast::server
