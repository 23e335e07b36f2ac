#pragma once
// Reads a server's Prometheus /metrics over HTTP (plain sockets, bounded wait): what a swarm needs to
// say what serving it cost (process_cpu_seconds_total, ncast_sent_bytes_total).
#include <map>
#include <optional>
#include <string>

#include "net/address.hpp"

namespace ncast::swarm {

// Series (name with labels) → value; nullopt when the server cannot be reached or answers garbage.
std::optional<std::map<std::string, double>> scrape_metrics(const net::Address& address, int timeout_ms = 2000);

}  // namespace ncast::swarm
