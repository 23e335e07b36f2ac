#pragma once
// A non-blocking UDP socket driven by Asio for readiness but doing its I/O in batches through the
// native handle, since Asio has neither recvmmsg nor sendmmsg (chriskohlhoff/asio#1062): datagrams come
// in by recvmmsg (runs merged by UDP GRO are split again), packets go out by sendmmsg, and consecutive
// packets of one size to one destination are merged into a single UDP GSO send (UDP_SEGMENT) when the
// kernel supports it. A packet is either written whole into its slot, or gathered: its head and tail in
// the slot, and a middle sent in place from memory the queue holds alive until the packet is sent, so
// that octets shared by many packets (a stream's coded symbol) are never copied per packet.
// Each datagram received comes with the time it reached the socket (the kernel's stamp), and the
// socket can leave Asio's watch while its owner reads it on a timer: arrivals then wake no one.
#include <sys/uio.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/udp.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "net/address.hpp"

namespace ncast::net {

struct SocketCounters {
  std::uint64_t recv_calls = 0, sendmmsg_calls = 0, gso_sends = 0, would_block = 0, send_errors = 0;
  std::uint64_t gro_messages = 0;  // received messages that carried several datagrams
  std::uint64_t packets_out = 0, bytes_out = 0;
  std::uint64_t messages_out = 0;  // sent messages: a GSO send or a single datagram each
};

class UdpSocket {
 public:
  static constexpr std::size_t kBatch = 64;  // messages a recvmmsg or sendmmsg call takes at most

  // Binds to address (port 0 picks a free one); buffer_bytes sizes the kernel buffers (as far as
  // the system allows). reuse_port: SO_REUSEPORT, so that sockets of one process (one per thread) share
  // the port and the kernel spreads peers over them by their address. Throws std::system_error naming
  // the address on failure.
  UdpSocket(boost::asio::io_context& io, const net::Address& address, std::size_t buffer_bytes,
            std::size_t max_datagram = 65536, bool reuse_port = false);
  ~UdpSocket();
  UdpSocket(const UdpSocket&) = delete;
  UdpSocket& operator=(const UdpSocket&) = delete;

  net::Address local() const { return local_; }
  // For readiness waits; closed (no waits) while unwatched.
  boost::asio::ip::udp::socket& asio() { return socket_; }
  // Whether Asio's reactor watches the socket (as constructed). Unwatched, arriving datagrams wake no
  // thread: the owner reads them when it next looks, and their stamps still tell when they arrived.
  void watch(bool on);
  bool watched() const { return socket_.is_open(); }
  bool gso() const { return gso_; }
  bool gro() const { return gro_; }

  // Reads what is waiting, at most max_batches recvmmsg calls; handler(datagram, from, arrived) for
  // each, arrived the steady_clock time it reached the socket. Returns the number of datagrams.
  using Receiver =
      std::function<void(std::span<std::uint8_t>, const net::Address&, std::chrono::steady_clock::time_point)>;
  std::size_t receive(const Receiver& handler, std::size_t max_batches = 8);

  // The buffer for the next outgoing packet, valid until commit or flush; empty while the queue is full.
  std::span<std::uint8_t> slot();
  void commit(std::size_t len, const net::Address& to);
  // Octets sent in place between a gathered packet's head and tail; keep owns them.
  struct Borrowed {
    std::span<const std::uint8_t> bytes;
    std::shared_ptr<const void> keep;
  };
  // Queues slot()[0, head) || middle || slot()[head, head + tail) as one packet.
  void commit(std::size_t head, Borrowed middle, std::size_t tail, const net::Address& to);
  bool full() const { return queued_ == kBatch; }
  std::size_t queued() const { return queued_; }
  // Sends what is queued. Returns false when the kernel buffer is full (the rest stays queued: wait
  // for writability and flush again).
  bool flush();
  // Sends one datagram now, outside the queue (handshake replies); false if it could not be sent.
  bool send_now(std::span<const std::uint8_t> datagram, const net::Address& to);

  const SocketCounters& counters() const { return counters_; }

 private:
  struct Batch;
  // The queue index past the run of packets from p that one message carries.
  std::size_t run_end(std::size_t p) const;
  // Packet p's iovecs, written to iov (room for three); their count.
  std::size_t gather(std::size_t p, iovec* iov);
  // The queue as sendmmsg messages.
  void group(Batch& batch);
  // Sends a batch: the packets done (sent, or dropped as unsendable); nullopt when the socket would block.
  std::optional<std::size_t> send(Batch& batch);
  void count_sent(const Batch& batch, std::size_t messages);
  // Takes the first packets off the queue.
  void drop_front(std::size_t packets);

  boost::asio::ip::udp::socket socket_;
  int fd_ = -1;  // owned here; the Asio socket holds it while watched
  bool v6_ = false;
  net::Address local_;
  bool gso_ = false, gro_ = false;
  std::size_t slot_size_;

  std::vector<std::uint8_t> rx_buffers_;
  std::vector<std::uint8_t> tx_buffers_;
  std::size_t tx_len_[kBatch]{};   // the whole packet
  std::size_t tx_head_[kBatch]{};  // of it in the slot before the middle (tx_len_ when there is none)
  Borrowed tx_middle_[kBatch];
  net::Address tx_to_[kBatch];
  std::size_t queued_ = 0;
  SocketCounters counters_;
};

}  // namespace ncast::net
