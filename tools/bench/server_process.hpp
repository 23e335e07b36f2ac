#pragma once
// An ncast-server child process for ncast-bench serve: started with the given options on loopback
// (listening and metrics ports picked by the kernel), optionally pinned to one CPU, its "listening"
// line read to learn the ports; stopped with SIGTERM (SIGKILL after a grace period) when destroyed.
#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "net/address.hpp"

namespace ncast::bench {

class ServerProcess {
 public:
  // Pinned to CPUs cpu .. cpu+cpus-1 when cpu >= 0. Throws std::runtime_error with the server's own
  // words when it does not start within timeout.
  ServerProcess(const std::string& binary, const std::vector<std::string>& args, int cpu, int cpus = 1,
                std::chrono::milliseconds timeout = std::chrono::seconds(20));
  ~ServerProcess();
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  const net::Address& address() const { return address_; }
  const net::Address& metrics() const { return metrics_; }
  const nlohmann::json& listening() const { return listening_; }

 private:
  void stop();
  static void terminate(pid_t pid);

  pid_t pid_ = -1;
  int out_ = -1;
  net::Address address_, metrics_;
  nlohmann::json listening_;
};

// Where ncast-server is in the build tree that holds this program (tools/bench/ncast-bench there).
std::string default_server_binary();

}  // namespace ncast::bench
