#pragma once
// The anchor of ncast-bench serve: how fast this host's network stack takes UDP datagrams through the
// server's own send path (net::UdpSocket: sendmmsg, UDP GSO for runs to one destination) when there
// is no coding, no crypto and no session logic: datagrams of the coded packets' size, sent round robin
// to as many loopback destinations as the swarm has peers, `run` datagrams in a row to each
// (a run longer than one becomes one GSO send). A drain thread keeps the receivers reading, with UDP
// GRO on as the peers have it. Rates are per second of the sending thread's CPU time, as the server's are per second of
// its process's: both are what one core could send, whatever else the host is doing.
#include <cstddef>
#include <cstdint>

namespace ncast::bench {

struct RawUdpResult {
  double cpu_s = 0, wall_s = 0;  // the sending thread's CPU time, and the elapsed time
  std::uint64_t packets = 0, bytes = 0;
  double gb_per_cpu_s() const { return cpu_s > 0 ? static_cast<double>(bytes) / cpu_s / 1e9 : 0.0; }
  double gb_per_wall_s() const { return wall_s > 0 ? static_cast<double>(bytes) / wall_s / 1e9 : 0.0; }
};

// The destinations are distinct loopback addresses (net::loopback_host), per_socket of them on one
// receiving socket (bound to INADDR_ANY), as the simulated peers share theirs.
RawUdpResult measure_raw_udp(std::size_t datagram, std::size_t destinations, std::size_t run, double seconds,
                             std::size_t per_socket);

}  // namespace ncast::bench
