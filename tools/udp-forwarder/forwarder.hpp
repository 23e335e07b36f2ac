#pragma once
// A user-space UDP forwarder between clients and one server, standing for the network between them:
// it delays a random share of the datagrams (reordering: a delayed datagram arrives after those sent
// behind it) and can move each client to a new outbound socket every so often (a NAT rebinding: the
// server sees the client's datagrams come from a new port, and what it sends to the old one is lost).
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <random>
#include <vector>

#include "net/address.hpp"

namespace ncast::tools {

struct ForwarderOptions {
  net::Address listen, server;
  double reorder = 0;                       // share of datagrams delayed, each direction
  std::chrono::microseconds delay{10'000};  // how long a delayed datagram is held
  std::chrono::milliseconds rebind{0};      // a client's new outbound port this often (0: never)
  std::uint64_t seed = 1;
};

struct ForwarderCounters {
  std::uint64_t forwarded = 0, delayed = 0, rebinds = 0, lost_to_old_ports = 0;
};

class Forwarder {
 public:
  using Clock = std::chrono::steady_clock;
  explicit Forwarder(const ForwarderOptions& options);  // binds; throws std::runtime_error naming the address
  ~Forwarder();
  Forwarder(const Forwarder&) = delete;
  Forwarder& operator=(const Forwarder&) = delete;

  std::uint16_t port() const { return port_; }
  // Forwards until stop becomes true (checked at least every 50 ms).
  void run(const volatile bool& stop);
  const ForwarderCounters& counters() const { return counters_; }

 private:
  struct Client {
    net::Address address;
    int upstream = -1;  // the socket its datagrams leave by toward the server
    Clock::time_point bound_at;
  };
  struct Held {
    Clock::time_point release;
    std::size_t client;  // of clients_
    bool to_server;
    std::vector<std::uint8_t> bytes;
  };

  std::size_t client_for(const net::Address& from, Clock::time_point now);
  void rebind_due(Clock::time_point now);
  void from_client(Clock::time_point now);
  void from_server(std::size_t client, Clock::time_point now);
  // Sends now, or holds for the delay when the dice say so.
  void forward(std::size_t client, bool to_server, std::vector<std::uint8_t> bytes, Clock::time_point now);
  // To the server by the client's current upstream socket, or to the client.
  void send(std::size_t client, bool to_server, const std::vector<std::uint8_t>& bytes);
  void release_due(Clock::time_point now);
  int poll_timeout_ms(Clock::time_point now) const;

  ForwarderOptions options_;
  int listen_fd_ = -1;
  std::uint16_t port_ = 0;
  std::vector<Client> clients_;
  std::vector<int> retired_;  // upstream sockets of old bindings: read and dropped, as a NAT would
  std::deque<Held> held_;     // in release order: every datagram is held equally long
  std::mt19937_64 rng_;
  std::bernoulli_distribution delay_dice_;
  ForwarderCounters counters_;
};

}  // namespace ncast::tools
