#pragma once
// The anchor of ncast-bench serve: how fast this host's network stack takes UDP datagrams through the
// server's own send path (server::UdpSocket: sendmmsg, UDP GSO for runs to one destination) when there
// is no coding, no crypto and no session logic: datagrams of the coded packets' size, sent round robin
// to as many receiving sockets on loopback as the swarm has peers, in runs of the length the paced
// sessions send. A drain thread keeps the receivers reading, as the peers do.
#include <cstddef>
#include <cstdint>

namespace ncast::bench {

struct RawUdpResult {
  double cpu_s = 0, wall_s = 0;  // the sending thread's CPU time, and the elapsed time
  std::uint64_t packets = 0, bytes = 0;
  double gb_per_cpu_s() const { return cpu_s > 0 ? static_cast<double>(bytes) / cpu_s / 1e9 : 0.0; }
  double gb_per_wall_s() const { return wall_s > 0 ? static_cast<double>(bytes) / wall_s / 1e9 : 0.0; }
};

RawUdpResult measure_raw_udp(std::size_t datagram, std::size_t destinations, std::size_t run, double seconds);

}  // namespace ncast::bench
