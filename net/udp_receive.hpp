#pragma once
// Batched UDP receive (recvmmsg) with UDP GRO (Linux ≥ 5.0), for the server's sockets and the simulated
// peers'. A socket with UDP_GRO set may take a run of equal datagrams from one sender as one message,
// with their size in a control message: a GSO send that crossed loopback whole, or what the NIC's GRO
// merged. One receive and one wake-up then bring what would have been a paced burst of several, which
// is most of a receiver's cost per datagram; receive_batch splits such messages again.
// With enable_arrival_times, receive_stamped also tells when each message reached the socket (the
// kernel's stamp), so that a receiver that reads late, in batches, still measures round trips exactly.
#include <netinet/in.h>
#include <netinet/udp.h>
#include <sys/socket.h>

#include <time.h>

#include <algorithm>
#include <chrono>
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

// Best effort: false where the kernel refuses (then the time of the read stands in).
inline bool enable_arrival_times(int fd) {
  const int one = 1;
  return ::setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one) == 0;
}

struct Received {
  std::size_t messages = 0;  // 0: nothing was waiting
  std::size_t datagrams = 0;
  std::size_t merged = 0;  // messages that carried several datagrams
};

namespace detail {

// What a receive reports of each message beside its source.
enum class Extra { none, destination, arrival };

// The kernel stamps arrivals on the real-time clock: a stamp as a steady_clock time, by the two clocks
// read together after the receive. A message without a stamp, or with one from the future or more than
// a second old (the real-time clock was stepped), reads as that moment.
class ArrivalClock {
 public:
  void read() {
    steady_ = std::chrono::steady_clock::now();
    ::clock_gettime(CLOCK_REALTIME, &real_);
  }
  std::chrono::steady_clock::time_point steady() const { return steady_; }
  std::chrono::steady_clock::time_point at(const timespec& stamp) const {
    const auto ago =
        std::chrono::seconds(real_.tv_sec - stamp.tv_sec) + std::chrono::nanoseconds(real_.tv_nsec - stamp.tv_nsec);
    if (ago < std::chrono::nanoseconds::zero() || ago > std::chrono::seconds(1)) return steady_;
    return steady_ - std::chrono::duration_cast<std::chrono::steady_clock::duration>(ago);
  }

 private:
  std::chrono::steady_clock::time_point steady_{};
  timespec real_{};
};

// One recvmmsg of at most `count` messages, each GRO run split again; with Extra::destination, also the
// IPv4 address each message was sent to (IP_PKTINFO), and messages without it are dropped; with
// Extra::arrival, when each reached the socket (SO_TIMESTAMPNS).
template <Extra kExtra, class F>
Received receive(int fd, std::uint8_t* buffers, std::size_t count, F&& f) {
  constexpr bool kDestination = kExtra == Extra::destination;
  count = std::min(count, kMaxReceiveBatch);
  constexpr std::size_t kControl = CMSG_SPACE(sizeof(int)) + (kDestination ? CMSG_SPACE(sizeof(in_pktinfo))
                                                              : kExtra == Extra::arrival ? CMSG_SPACE(sizeof(timespec))
                                                                                         : std::size_t{0});
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
  ArrivalClock clock;
  if constexpr (kExtra == Extra::arrival) clock.read();
  for (std::size_t i = 0; i < r.messages; ++i) {
    const msghdr& h = msgs[i].msg_hdr;
    // A truncated control part may have lost the GRO segment size: the message cannot be split.
    if (h.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) continue;
    const auto addr = Address::from_sockaddr(reinterpret_cast<const sockaddr*>(&from[i]));
    if (addr.family == 0 || (kDestination && addr.family != 4)) continue;
    std::size_t segment = 0;
    Address to{};
    to.family = 0;
    [[maybe_unused]] auto arrived = clock.steady();
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
      } else if (kExtra == Extra::arrival && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_TIMESTAMPNS) {
        timespec stamp{};
        std::memcpy(&stamp, CMSG_DATA(c), sizeof stamp);
        arrived = clock.at(stamp);
      }
    }
    if (kDestination && to.family == 0) continue;
    const std::span<std::uint8_t> message{buffers + i * kGroMaxMessage, msgs[i].msg_len};
    if (segment == 0 || segment >= message.size()) segment = message.size();
    else ++r.merged;
    for (std::size_t at = 0; at < message.size(); at += segment) {
      const auto d = message.subspan(at, std::min(segment, message.size() - at));
      if constexpr (kDestination) f(d, addr, to);
      else if constexpr (kExtra == Extra::arrival) f(d, addr, arrived);
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
  return detail::receive<detail::Extra::none>(fd, buffers, count, std::forward<F>(f));
}

// As receive_batch, for a socket with enable_arrival_times: f(datagram, from, arrived), arrived the
// steady_clock time the message reached the socket.
template <class F>
Received receive_stamped(int fd, std::uint8_t* buffers, std::size_t count, F&& f) {
  return detail::receive<detail::Extra::arrival>(fd, buffers, count, std::forward<F>(f));
}

}  // namespace ncast::net
