#pragma once
// A user-space UDP forwarder between clients and one server, standing for the network between them
// where the kernel cannot (tests on loopback, the bed of tools/netbed.sh has no netem): it flips bits,
// delays every datagram (with a jitter that reorders them), delays a random share longer (reordering
// on top of any delay), and can move each client to a new outbound socket every so often (a NAT
// rebinding: the server sees the client's datagrams come from a new port, and what it sends to the
// old one is lost). Each client gets an upstream socket of its own, so the server sees one source per
// client, as through a NAT.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <queue>
#include <random>
#include <unordered_map>
#include <vector>

#include "net/address.hpp"

namespace ncast::tools {

struct ForwarderOptions {
  net::Address listen, server;
  double corrupt = 0;                   // share of datagrams, each way, with one bit flipped
  double delay_ms = 0;                  // every datagram held this long, each way
  double jitter_ms = 0;                 // each datagram's delay varies uniformly by up to ± this (reorders)
  double reorder = 0;                   // share of datagrams, each way, held reorder_ms longer
  double reorder_ms = 10;               // how much longer the reorder share is held
  std::chrono::milliseconds rebind{0};  // a client's new outbound port this often (0: never)
  std::uint64_t seed = 1;
};

struct ForwarderCounters {
  std::uint64_t up = 0, down = 0;                      // datagrams relayed to the server, to clients
  std::uint64_t corrupted_up = 0, corrupted_down = 0;  // of which with a flipped bit
  std::uint64_t reordered = 0;                         // of which in the --reorder share
  std::uint64_t rebinds = 0, lost_to_old_ports = 0;    // server datagrams to a client's old port
  std::uint64_t send_failures = 0;                     // dropped: the kernel refused them
};

class Forwarder {
 public:
  using Clock = std::chrono::steady_clock;
  // Binds the listening socket; throws std::system_error naming the address.
  explicit Forwarder(const ForwarderOptions& options);
  ~Forwarder();
  Forwarder(const Forwarder&) = delete;
  Forwarder& operator=(const Forwarder&) = delete;

  // Relays until stop() returns true (checked at least every 50 ms).
  template <typename Stop>
  void run(Stop stop) {
    while (!stop()) step();
  }
  const ForwarderCounters& counters() const { return counters_; }
  // The address the clients send to (its port chosen by the kernel where the options gave 0).
  net::Address local() const;

 private:
  struct Client {
    net::Address address;
    int upstream = -1;  // the socket its datagrams leave by toward the server
    Clock::time_point bound_at;
  };
  struct Held {  // a delayed datagram
    Clock::time_point due;
    std::uint64_t order;  // equal due times leave in arrival order
    std::size_t client;   // of clients_
    bool up;              // toward the server
    std::vector<std::uint8_t> bytes;
    bool operator>(const Held& o) const { return due != o.due ? due > o.due : order > o.order; }
  };

  // Waits for datagrams or the next due one, and handles what is ready.
  void step();
  std::size_t client_for(const net::Address& from, Clock::time_point now);
  int upstream_socket() const;
  void rebind_due(Clock::time_point now);
  void from_clients(Clock::time_point now);
  void from_server(std::size_t client, Clock::time_point now);
  // Impairs, then sends now or holds until due.
  void pass(std::size_t client, bool up, std::vector<std::uint8_t> bytes, Clock::time_point now);
  void corrupt(std::vector<std::uint8_t>& bytes, bool up);
  Clock::duration delay();
  // To the server by the client's current upstream socket (one held across a rebinding leaves by
  // the new one, as it would behind a NAT), or to the client.
  void send(std::size_t client, bool up, const std::vector<std::uint8_t>& bytes);
  void release_due(Clock::time_point now);
  int poll_timeout_ms(Clock::time_point now) const;

  ForwarderOptions options_;
  int listen_fd_ = -1;
  std::vector<Client> clients_;
  std::unordered_map<net::Address, std::size_t, net::AddressHash> client_of_;
  std::vector<int> retired_;  // upstream sockets of old bindings: read and dropped, as a NAT would
  std::priority_queue<Held, std::vector<Held>, std::greater<>> held_;
  std::uint64_t order_ = 0;
  std::mt19937_64 rng_;
  ForwarderCounters counters_;
};

}  // namespace ncast::tools
