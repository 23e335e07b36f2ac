#pragma once
// ncast-server --threads N: N Servers on one port, each with its own thread, io_context, socket
// (SO_REUSEPORT: the kernel hashes a peer's address to one socket, so a peer stays with one thread),
// sessions, coded-symbol cache and replicas of the streams. What they share is read-only (the
// identity, segment blocks) or has a lock off the per-packet path (the chunk coder, called on cache
// misses; the session count, touched per JOIN and close). The retry-token key is shared too, so a
// JOIN is accepted by whichever thread receives it. Rates and the join limit are split evenly among
// the threads; max_sessions holds for all of them together.
#include <boost/asio/io_context.hpp>

#include <atomic>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "server/coded_cache.hpp"
#include "server/media_stream.hpp"
#include "server/metrics.hpp"
#include "server/server.hpp"
#include "server/stream_replica.hpp"

namespace ncast::server {

class ServerPool {
 public:
  struct Totals {
    ServerMetrics metrics;
    net::SocketCounters socket;
    CacheStats cache;
    std::size_t sessions = 0;
    std::map<std::string, StreamTotals> streams;  // by stream name
  };

  // Binds every thread's socket now (throws as UdpSocket does); coder must be safe to call from
  // several threads (LockedChunkCoder). on_error runs on a failing thread with its message.
  ServerPool(const ServerConfig& config, const proto::Ed25519Identity& identity, unsigned threads, ChunkCoder& coder,
             std::size_t cache_bytes, const std::vector<MediaStream*>& streams,
             std::function<void(const std::string&)> on_error);
  ~ServerPool();
  ServerPool(const ServerPool&) = delete;
  ServerPool& operator=(const ServerPool&) = delete;

  void start();
  // On the streams' (ingest) thread, after stream gained segments or became final.
  void stream_changed(const MediaStream& stream);
  // Says BYE to every session, stops and joins the threads. Idempotent.
  void stop();

  net::Address local() const { return local_; }
  bool gso() const;
  unsigned threads() const { return static_cast<unsigned>(workers_.size()); }
  // The threads' counters summed (asks each running thread for its own and waits for the answers).
  Totals totals();

 private:
  struct Worker {
    boost::asio::io_context io;
    std::unique_ptr<CodedCache> cache;
    std::vector<std::unique_ptr<StreamReplica>> replicas;  // in the order of streams_
    std::unique_ptr<Server> server;
    std::thread thread;
    std::atomic<bool> finished{false};  // its thread returned (stopped, or died of an exception)
  };
  // On w's thread, or once it has stopped: its own counters.
  static Totals count(Worker& w);

  std::vector<MediaStream*> streams_;
  std::vector<std::uint32_t> published_;  // segments of each stream the replicas have been sent
  std::vector<bool> published_final_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::function<void(const std::string&)> on_error_;
  net::Address local_;
  bool running_ = false;
};

}  // namespace ncast::server
