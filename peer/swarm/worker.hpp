#pragma once
// One worker thread of a swarm: many simulated peers on one io_context, polled on a tick when due, sharing
// the thread's sockets (peer/swarm/socket_group.hpp), receive scratch and socket readiness set. The calling thread
// posts requests (start a peer, churn one) and reads the counters the worker publishes every few ticks.
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "peer/shared_parts.hpp"
#include "peer/swarm/sim_peer.hpp"
#include "peer/swarm/socket_group.hpp"

namespace ncast::swarm {

// Makes a peer on the worker's thread, with the worker's io_context, sockets and cache of shared
// parts (null when they are not shared).
using MakePeer = std::function<std::unique_ptr<SimPeer>(boost::asio::io_context&, SocketGroups&,
                                                        const std::shared_ptr<peer::SharedParts>&)>;

// What a worker publishes for the calling thread, each snapshot self-consistent.
struct WorkerSnapshot {
  std::size_t handled = 0;  // start and churn requests carried out
  std::size_t running = 0, complete = 0, failed = 0, left = 0;
  std::uint64_t symbols = 0, arrived = 0, lost = 0, bytes = 0, needed = 0;
};

class Worker {
 public:
  // per_socket: peers that share a socket (SocketGroups); share_parts: the peers of the thread hash
  // and open each CODED shared part once (peer::SharedParts).
  Worker(std::uint16_t max_datagram, std::size_t per_socket, bool share_parts);

  void run();
  // Starts the peer that make makes.
  void add(MakePeer make);
  // Churn: a running peer, picked by pick, leaves, and make starts its replacement.
  void churn(std::uint64_t pick, bool polite, MakePeer make);
  // Ends the run: peers still running fail with why; returns every peer's report.
  std::future<std::vector<nlohmann::json>> finish(std::string why);
  void join();
  WorkerSnapshot snapshot();

 private:
  void tick();
  void publish();

  boost::asio::io_context io_;
  SocketGroups sockets_;  // outlives the peers, which leave their seats as they go
  std::shared_ptr<peer::SharedParts> parts_;
  boost::asio::steady_timer tick_timer_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> guard_;
  std::vector<std::unique_ptr<SimPeer>> peers_;
  std::size_t handled_ = 0;
  std::uint64_t ticks_ = 0;
  bool stopping_ = false;
  std::thread thread_;
  std::mutex mutex_;
  WorkerSnapshot snapshot_;
};

}  // namespace ncast::swarm
