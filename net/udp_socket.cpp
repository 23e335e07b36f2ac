#include "net/udp_socket.hpp"

#include <netinet/in.h>
#include <netinet/udp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>

#include "net/udp_receive.hpp"

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif

namespace ncast::net {
namespace {

constexpr std::size_t kMaxGsoSegments = 64;
constexpr std::size_t kMaxGsoBytes = 65000;

}  // namespace

UdpSocket::UdpSocket(boost::asio::io_context& io, const net::Address& address, std::size_t buffer_bytes,
                     std::size_t max_datagram, bool reuse_port)
    : socket_(io), slot_size_(max_datagram), rx_buffers_(kBatch * kGroMaxMessage), tx_buffers_(kBatch * max_datagram) {
  const int family = address.family == 4 ? AF_INET : AF_INET6;
  const int fd = ::socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "socket for " + address.to_string());
  const int size = static_cast<int>(buffer_bytes);
  // Best effort: the kernel caps these at net.core.{r,w}mem_max.
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
  const int one = 1;
  if (reuse_port && ::setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) != 0) {
    const int e = errno;
    ::close(fd);
    throw std::system_error(e, std::generic_category(), "SO_REUSEPORT for " + address.to_string());
  }
  sockaddr_storage ss{};
  const socklen_t len = address.to_sockaddr(ss);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0) {
    const int e = errno;
    ::close(fd);
    throw std::system_error(e, std::generic_category(), "cannot bind UDP " + address.to_string());
  }
  socklen_t got = sizeof ss;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &got);
  local_ = net::Address::from_sockaddr(reinterpret_cast<sockaddr*>(&ss));
  int zero = 0;
  gso_ = ::setsockopt(fd, SOL_UDP, UDP_SEGMENT, &zero, sizeof zero) == 0;
  gro_ = enable_udp_gro(fd);
  enable_arrival_times(fd);
  fd_ = fd;
  v6_ = family != AF_INET;
  watch(true);
}

UdpSocket::~UdpSocket() {
  if (!watched()) ::close(fd_);
}

void UdpSocket::watch(bool on) {
  if (on == watched()) return;
  // Released, the reactor forgets the descriptor (its pending waits end, aborted); assigned, it watches
  // it again.
  if (on) socket_.assign(v6_ ? boost::asio::ip::udp::v6() : boost::asio::ip::udp::v4(), fd_);
  else (void)socket_.release();
}

std::size_t UdpSocket::receive(const Receiver& handler, std::size_t max_batches) {
  std::size_t total = 0;
  for (std::size_t batch = 0; batch < max_batches; ++batch) {
    ++counters_.recv_calls;
    const Received r = receive_stamped(fd_, rx_buffers_.data(), kBatch, handler);
    total += r.datagrams;
    counters_.gro_messages += r.merged;
    if (r.messages < kBatch) break;
  }
  return total;
}

std::span<std::uint8_t> UdpSocket::slot() {
  if (full()) return {};
  return {tx_buffers_.data() + queued_ * slot_size_, slot_size_};
}

void UdpSocket::commit(std::size_t len, const net::Address& to) {
  tx_len_[queued_] = len;
  tx_head_[queued_] = len;
  tx_to_[queued_] = to;
  ++queued_;
}

void UdpSocket::commit(std::size_t head, Borrowed middle, std::size_t tail, const net::Address& to) {
  tx_len_[queued_] = head + middle.bytes.size() + tail;
  tx_head_[queued_] = head;
  tx_middle_[queued_] = std::move(middle);
  tx_to_[queued_] = to;
  ++queued_;
}

bool UdpSocket::send_now(std::span<const std::uint8_t> datagram, const net::Address& to) {
  sockaddr_storage ss{};
  const socklen_t len = to.to_sockaddr(ss);
  const ssize_t n =
      ::sendto(fd_, datagram.data(), datagram.size(), MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&ss), len);
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK) ++counters_.would_block;
    else ++counters_.send_errors;
    return false;
  }
  ++counters_.packets_out;
  counters_.bytes_out += datagram.size();
  return true;
}

// One sendmmsg call's worth of the queue: its messages, and the queue index of each one's first packet.
struct UdpSocket::Batch {
  mmsghdr msgs[kBatch];
  iovec iovs[3 * kBatch];  // a gathered packet's head, middle and tail
  sockaddr_storage to[kBatch];
  alignas(cmsghdr) char control[kBatch][CMSG_SPACE(sizeof(std::uint16_t))];
  std::size_t first_packet[kBatch + 1];
  std::size_t messages = 0;
};

bool UdpSocket::flush() {
  while (queued_ > 0) {
    Batch batch;
    group(batch);
    const auto done = send(batch);
    if (!done) return false;
    drop_front(*done);
  }
  return true;
}

std::size_t UdpSocket::run_end(std::size_t p) const {
  // A run of one destination and one size (the last may be shorter) becomes one GSO message.
  std::size_t q = p + 1;
  if (!gso_) return q;
  std::size_t bytes = tx_len_[p];
  while (q < queued_ && q - p < kMaxGsoSegments && tx_to_[q] == tx_to_[p] && tx_len_[q - 1] == tx_len_[p] &&
         tx_len_[q] <= tx_len_[p] && bytes + tx_len_[q] <= kMaxGsoBytes) {
    bytes += tx_len_[q];
    ++q;
  }
  return q;
}

std::size_t UdpSocket::gather(std::size_t p, iovec* iov) {
  std::uint8_t* slot = tx_buffers_.data() + p * slot_size_;
  const std::size_t head = tx_head_[p];
  iov[0] = {slot, head};
  if (head == tx_len_[p]) return 1;
  const auto middle = tx_middle_[p].bytes;
  // The kernel only reads through iov_base: the const_cast lends it nothing to write.
  iov[1] = {const_cast<std::uint8_t*>(middle.data()), middle.size()};
  iov[2] = {slot + head, tx_len_[p] - head - middle.size()};
  return 3;
}

void UdpSocket::group(Batch& batch) {
  std::size_t m = 0, iovs = 0;
  for (std::size_t p = 0; p < queued_; ++m) {
    const std::size_t q = run_end(p);
    mmsghdr& msg = batch.msgs[m];
    std::memset(&msg, 0, sizeof msg);
    // A GSO message is segmented by gso_size over its payload as a whole, whatever its iovecs.
    msg.msg_hdr.msg_iov = &batch.iovs[iovs];
    for (std::size_t i = p; i < q; ++i) iovs += gather(i, &batch.iovs[iovs]);
    msg.msg_hdr.msg_iovlen = static_cast<std::size_t>(&batch.iovs[iovs] - msg.msg_hdr.msg_iov);
    msg.msg_hdr.msg_name = &batch.to[m];
    msg.msg_hdr.msg_namelen = tx_to_[p].to_sockaddr(batch.to[m]);
    if (q - p > 1) {
      msg.msg_hdr.msg_control = batch.control[m];
      msg.msg_hdr.msg_controllen = sizeof batch.control[m];
      cmsghdr* c = CMSG_FIRSTHDR(&msg.msg_hdr);
      c->cmsg_level = SOL_UDP;
      c->cmsg_type = UDP_SEGMENT;
      c->cmsg_len = CMSG_LEN(sizeof(std::uint16_t));
      const std::uint16_t seg = static_cast<std::uint16_t>(tx_len_[p]);
      std::memcpy(CMSG_DATA(c), &seg, sizeof seg);
    }
    batch.first_packet[m] = p;
    p = q;
  }
  batch.first_packet[m] = queued_;
  batch.messages = m;
}

std::optional<std::size_t> UdpSocket::send(Batch& batch) {
  ++counters_.sendmmsg_calls;
  const int sent = ::sendmmsg(fd_, batch.msgs, static_cast<unsigned>(batch.messages), MSG_DONTWAIT);
  if (sent >= 0) {
    count_sent(batch, static_cast<std::size_t>(sent));
    return batch.first_packet[sent];
  }
  if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS) {
    ++counters_.would_block;
    return std::nullopt;
  }
  if (batch.first_packet[1] - batch.first_packet[0] > 1 && (errno == EIO || errno == EINVAL || errno == EOPNOTSUPP)) {
    // The device cannot segment: send packets one by one from now on.
    gso_ = false;
    return 0;
  }
  // This message cannot be sent (e.g. no route): drop it rather than wedge the queue.
  ++counters_.send_errors;
  return batch.first_packet[1];
}

void UdpSocket::count_sent(const Batch& batch, std::size_t messages) {
  for (std::size_t i = 0; i < messages; ++i) {
    const std::size_t packets = batch.first_packet[i + 1] - batch.first_packet[i];
    ++counters_.messages_out;
    if (packets > 1) ++counters_.gso_sends;
    counters_.packets_out += packets;
    for (std::size_t k = batch.first_packet[i]; k < batch.first_packet[i + 1]; ++k) counters_.bytes_out += tx_len_[k];
  }
}

void UdpSocket::drop_front(std::size_t packets) {
  // Sent packets let go of their middles; what is left moves to the front of the queue.
  for (std::size_t i = 0; i < packets; ++i) tx_middle_[i] = {};
  const std::size_t left = queued_ - packets;
  if (left > 0 && packets > 0) {
    std::memmove(tx_buffers_.data(), tx_buffers_.data() + packets * slot_size_, left * slot_size_);
    std::move(tx_len_ + packets, tx_len_ + queued_, tx_len_);
    std::move(tx_head_ + packets, tx_head_ + queued_, tx_head_);
    std::move(tx_middle_ + packets, tx_middle_ + queued_, tx_middle_);
    std::move(tx_to_ + packets, tx_to_ + queued_, tx_to_);
  }
  queued_ = left;
}

}  // namespace ncast::net
