#pragma once
// The sockets of one swarm worker. A socket per simulated peer would cap a swarm at the host's
// descriptor limit (20,000 on the GPU host, where 40,000 peers are wanted), so toward an IPv4 loopback
// server the peers share sockets: a group of up to `per_socket` peers on one socket bound to
// INADDR_ANY and a port, each peer with a loopback address of its own (net::loopback_host). Its
// datagrams leave from that address (IP_PKTINFO), and arriving ones go to the peer they were sent to,
// so the server sees as many hosts as peers. Toward any other server (IPv6, another host) each peer
// has a socket of its own, as before.
#include <boost/asio/io_context.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <span>
#include <vector>

#include "net/address.hpp"
#include "net/udp_receive.hpp"
#include "peer/server_link.hpp"
#include "peer/swarm/ready_set.hpp"

namespace ncast::swarm {

using peer::TimePoint;

// Datagrams are read in batches into a buffer that the sockets of one thread share. A message may be
// a GRO run of several datagrams (net/udp_receive.hpp), so each has room for the largest.
struct RxScratch {
  static constexpr std::size_t kBatch = 16;
  explicit RxScratch(std::size_t max_datagram) : max_datagram(max_datagram), bytes(kBatch * net::kGroMaxMessage) {}
  std::size_t max_datagram;  // longer datagrams are dropped: too long for the session
  std::vector<std::uint8_t> bytes;
};

// A peer on a group's socket.
class GroupMember {
 public:
  virtual void on_datagram(std::span<std::uint8_t> datagram, const net::Address& from, TimePoint now) = 0;
  // After a round of reads that brought the member datagrams.
  virtual void after_input(TimePoint now) = 0;

 protected:
  ~GroupMember() = default;
};

class SocketGroup final : private Readable {
 public:
  // shared: bound to INADDR_ANY with destination information (IPv4 only); else one member's socket,
  // bound as a peer's own (to the server's address when it is a loopback one, else to any).
  SocketGroup(const net::Address& server, bool shared, std::size_t capacity, std::size_t socket_buffer,
              RxScratch& scratch, ReadySet& ready);
  ~SocketGroup();
  SocketGroup(const SocketGroup&) = delete;
  SocketGroup& operator=(const SocketGroup&) = delete;

  bool shared() const { return shared_; }
  bool full() const { return seats_.size() >= capacity_; }
  bool empty() const { return seats_.empty(); }
  // The member's address: when shared, a loopback address that no other member of the process has
  // (net::loopback_host, in turn), else the socket's; with the socket's port.
  net::Address seat(GroupMember& member);
  void unseat(GroupMember& member);
  // Sends from the member at `local` (an address seat gave), counting in `refused` what the kernel
  // refuses: at once, or while held, with the others held in one sendmmsg at release.
  void send(const net::Address& local, const net::Address& to, std::span<const std::uint8_t> datagram,
            std::uint64_t& refused);
  // Between hold and release (a round of input, a tick) sends wait: a swarm's peers ACK as their
  // datagrams arrive, and a system call per ACK was a sixth of its CPU.
  void hold() { holding_ = true; }
  void release();
  // Datagrams that arrived for no member (a member gone, or none with that address).
  std::uint64_t unclaimed() const { return unclaimed_; }

 private:
  struct Seat {
    std::array<std::uint8_t, 4> ip;
    GroupMember* member;
    bool touched;
  };
  struct Held {
    net::Address from, to;
    std::size_t offset, size;
    std::uint64_t* refused;
  };
  static constexpr std::size_t kHeld = 32;
  void on_readable() override;
  Seat* find(const net::Address& to);
  bool send_now(const net::Address& local, const net::Address& to, std::span<const std::uint8_t> datagram);
  void flush();

  int fd_ = -1;
  bool shared_;
  std::size_t capacity_;
  net::Address bound_;
  RxScratch& scratch_;
  ReadySet& ready_;
  std::vector<Seat> seats_;
  std::vector<GroupMember*> touched_;  // in a round of reads
  bool holding_ = false;
  std::vector<Held> held_;
  std::vector<std::uint8_t> held_bytes_;
  std::uint64_t unclaimed_ = 0;
};

// Seats each peer of a worker in a group with room, or in a new one.
class SocketGroups {
 public:
  struct Place {
    SocketGroup* group = nullptr;
    net::Address local;  // the peer's address as the server sees it
  };

  // per_socket 1: a socket per peer whatever the server.
  SocketGroups(boost::asio::io_context& io, std::size_t per_socket, std::uint16_t max_datagram);

  // servers: those the member talks to (at least one); the first decides a socket of its own's binding.
  Place seat(GroupMember& member, const std::vector<net::Address>& servers, std::size_t socket_buffer);
  void leave(GroupMember& member, Place& place);
  // Closes the sockets of groups left empty (not during a group's read, which may empty it).
  void sweep();
  // hold and release every group's sends (SocketGroup::hold): around a tick of all the peers.
  void hold();
  void release();
  std::size_t sockets() const { return groups_.size(); }
  std::uint64_t unclaimed() const;
  // No more call-backs (on the io_context's thread).
  void close() { ready_.close(); }

 private:
  RxScratch scratch_;
  ReadySet ready_;
  std::size_t per_socket_;
  std::list<std::unique_ptr<SocketGroup>> groups_;
  std::uint64_t swept_unclaimed_ = 0;
};

// Whether peers toward these servers share sockets: per_socket > 1, and every server IPv4 loopback.
bool shares_sockets(const std::vector<net::Address>& servers, std::size_t per_socket);

}  // namespace ncast::swarm
