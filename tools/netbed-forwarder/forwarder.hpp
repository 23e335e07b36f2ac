#pragma once
// A UDP forwarder for the emulated network of tools/netbed.sh: it relays datagrams between the peers
// that send to it and one server, and impairs them on the way as the kernel of the bed cannot (it has
// no netem): flipped bits, delay and reordering. Each peer address gets an upstream socket of its own,
// so the server sees one source per peer, as through a NAT.
#include <cstdint>
#include <queue>
#include <random>
#include <unordered_map>
#include <vector>

#include "net/address.hpp"

namespace ncast::netbed {

struct ForwarderOptions {
  net::Address listen, server;
  double corrupt = 0;    // fraction of datagrams (each way) with one bit flipped
  double delay_ms = 0;   // one-way delay added each way
  double jitter_ms = 0;  // each datagram's delay varies uniformly by up to ± this (reorders)
  std::uint64_t seed = 1;
};

struct ForwarderCounters {
  std::uint64_t up = 0, down = 0;                      // datagrams relayed to the server, to peers
  std::uint64_t corrupted_up = 0, corrupted_down = 0;  // of which with a flipped bit
  std::uint64_t send_failures = 0;                     // dropped: the kernel refused them
};

class Forwarder {
 public:
  // Binds the listening socket; throws std::system_error naming the address.
  explicit Forwarder(const ForwarderOptions& options);
  ~Forwarder();
  Forwarder(const Forwarder&) = delete;
  Forwarder& operator=(const Forwarder&) = delete;

  // Relays until stop() returns true (checked a few times a second).
  template <typename Stop>
  void run(Stop stop) {
    while (!stop()) step();
  }
  const ForwarderCounters& counters() const { return counters_; }

 private:
  struct Held {  // a delayed datagram
    double due_ms;
    std::uint64_t order;
    int fd;
    net::Address to;  // family 0: the socket's connected server
    std::vector<std::uint8_t> bytes;
    bool operator>(const Held& o) const { return due_ms != o.due_ms ? due_ms > o.due_ms : order > o.order; }
  };

  // Waits for datagrams or the next due one (at most 200 ms), and handles what is ready.
  void step();
  void from_peers();
  void from_server(int fd, const net::Address& peer);
  int upstream_for(const net::Address& peer);
  // Impairs and sends now, or holds until due.
  void pass(int fd, const net::Address& to, std::vector<std::uint8_t> bytes, bool up);
  void send(int fd, const net::Address& to, const std::vector<std::uint8_t>& bytes);
  void release_due();
  double now_ms() const;

  ForwarderOptions options_;
  int listen_fd_ = -1;
  std::unordered_map<net::Address, int, net::AddressHash> upstream_;
  std::unordered_map<int, net::Address> peer_of_;
  std::priority_queue<Held, std::vector<Held>, std::greater<>> held_;
  std::uint64_t order_ = 0;
  std::mt19937_64 rng_;
  ForwarderCounters counters_;
};

}  // namespace ncast::netbed
