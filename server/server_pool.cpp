#include "server/server_pool.hpp"

#include <boost/asio/post.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>

#include "server/source_limits.hpp"

namespace ncast::server {
namespace asio = boost::asio;

namespace {

void add(net::SocketCounters& a, const net::SocketCounters& b) {
  a.recv_calls += b.recv_calls;
  a.sendmmsg_calls += b.sendmmsg_calls;
  a.gso_sends += b.gso_sends;
  a.messages_out += b.messages_out;
  a.would_block += b.would_block;
  a.send_errors += b.send_errors;
  a.packets_out += b.packets_out;
  a.bytes_out += b.bytes_out;
}

void add(CacheStats& a, const CacheStats& b) {
  a.symbols_coded += b.symbols_coded;
  a.engine_calls += b.engine_calls;
  a.engine_seconds += b.engine_seconds;
  a.hits += b.hits;
  a.misses += b.misses;
  a.evictions += b.evictions;
  a.bytes += b.bytes;
}

void add(ServerPool::Totals& a, const ServerPool::Totals& b) {
  a.metrics += b.metrics;
  add(a.socket, b.socket);
  add(a.cache, b.cache);
  a.sessions += b.sessions;
  for (const auto& [name, totals] : b.streams) a.streams[name] += totals;
}

}  // namespace

ServerPool::ServerPool(const ServerConfig& config, const proto::Ed25519Identity& identity, unsigned threads,
                       ChunkCoder& coder, std::size_t cache_bytes, const std::vector<MediaStream*>& streams,
                       std::function<void(const std::string&)> on_error)
    : streams_(streams), on_error_(std::move(on_error)) {
  if (threads == 0) throw std::invalid_argument("a server pool needs at least one thread");
  ServerConfig c = config;
  const double share = 1.0 / threads;
  c.max_rate *= share;
  c.retry_rate *= share;
  c.join_rate *= share;
  c.reuse_port = threads > 1;
  std::array<std::uint8_t, 32> key{};
  proto::random_bytes(key);
  c.token_key = key;
  c.open_sessions = std::make_shared<std::atomic<std::size_t>>(0);
  c.sources = std::make_shared<SourceLimits>(c.max_sessions_per_source);
  for (const MediaStream* s : streams_) {
    published_.push_back(s->segment_count());
    published_final_.push_back(s->final());
  }
  for (unsigned i = 0; i < threads; ++i) {
    auto w = std::make_unique<Worker>();
    w->cache = std::make_unique<CodedCache>(coder, std::max<std::size_t>(cache_bytes / threads, 1));
    w->server = std::make_unique<Server>(w->io, c, identity);
    for (const MediaStream* s : streams_) {
      w->replicas.push_back(std::make_unique<StreamReplica>(*s, *w->cache));
      w->server->add_stream(*w->replicas.back());
    }
    // The first socket chose the port (when asked for port 0); the others join it.
    if (i == 0) c.listen = local_ = w->server->local();
    workers_.push_back(std::move(w));
  }
}

ServerPool::~ServerPool() { stop(); }

bool ServerPool::gso() const { return workers_.front()->server->gso(); }

void ServerPool::start() {
  if (running_) return;
  running_ = true;
  for (std::size_t i = 0; i < workers_.size(); ++i) {
    Worker& w = *workers_[i];
    asio::post(w.io, [&w] { w.server->start(); });
    w.thread = std::thread([this, &w, i] {
      try {
        w.io.run();
      } catch (const std::exception& e) {
        on_error_("thread " + std::to_string(i) + ": " + e.what());
      }
      w.finished = true;
    });
  }
}

void ServerPool::stream_changed(const MediaStream& stream) {
  const auto at = std::find(streams_.begin(), streams_.end(), &stream);
  if (at == streams_.end()) return;
  const auto k = static_cast<std::size_t>(at - streams_.begin());
  std::vector<SegmentRef> more;
  for (std::uint32_t i = published_[k]; i < stream.segment_count(); ++i) more.push_back(stream.segment(i));
  if (more.empty() && published_final_[k] == stream.final()) return;
  published_[k] = stream.segment_count();
  published_final_[k] = stream.final();
  const bool final = stream.final();
  const std::uint32_t first = stream.first_segment();
  const std::uint32_t edge = stream.live_edge();
  const std::uint64_t bitrate = stream.info().bitrate;
  for (auto& wp : workers_) {
    Worker& w = *wp;
    asio::post(w.io, [&w, k, more, final, first, edge, bitrate] {
      w.replicas[k]->extend(more, final, first, edge, bitrate);
      w.server->stream_changed(*w.replicas[k]);
    });
  }
}

void ServerPool::stop() {
  if (!running_) return;
  for (auto& wp : workers_) {
    Worker& w = *wp;
    asio::post(w.io, [&w] { w.server->shutdown([&w] { w.io.stop(); }); });
  }
  for (auto& w : workers_)
    if (w->thread.joinable()) w->thread.join();
  running_ = false;
}

ServerPool::Totals ServerPool::count(Worker& w) {
  Totals t;
  t.metrics = w.server->metrics();
  t.socket = w.server->socket_counters();
  t.cache = w.cache->stats();
  t.sessions = w.server->session_count();
  t.streams = w.server->stream_totals();
  return t;
}

ServerPool::Totals ServerPool::totals() {
  Totals t;
  if (!running_) {
    for (auto& w : workers_) add(t, count(*w));
    return t;
  }
  // Each thread counts its own into a promise it shares, and touches nothing of this frame: a thread
  // may still be on its way out of the handler when this call has returned, and a thread that has
  // died answers nothing (its count is left out).
  std::vector<std::future<Totals>> answers;
  for (auto& wp : workers_) {
    Worker& w = *wp;
    auto answer = std::make_shared<std::promise<Totals>>();
    answers.push_back(answer->get_future());
    asio::post(w.io, [&w, answer] { answer->set_value(count(w)); });
  }
  for (std::size_t i = 0; i < answers.size(); ++i) {
    while (answers[i].wait_for(std::chrono::milliseconds(100)) != std::future_status::ready)
      if (workers_[i]->finished) break;
    if (answers[i].wait_for(std::chrono::seconds(0)) == std::future_status::ready) add(t, answers[i].get());
  }
  return t;
}

}  // namespace ncast::server
