#include "peer/swarm/worker.hpp"

#include <boost/asio/post.hpp>

#include <chrono>

namespace ncast::swarm {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
constexpr auto kTick = 10ms;
constexpr int kSnapshotEvery = 5;  // ticks between counter snapshots for the calling thread

}  // namespace

Worker::Worker(std::uint16_t max_datagram, std::size_t per_socket, bool share_parts)
    : sockets_(io_, per_socket, max_datagram),
      parts_(share_parts ? std::make_shared<peer::SharedParts>() : nullptr),
      tick_timer_(io_),
      guard_(io_.get_executor()) {}

void Worker::run() {
  thread_ = std::thread([this] {
    tick();
    io_.run();
  });
}

void Worker::add(MakePeer make) {
  asio::post(io_, [this, make = std::move(make)] {
    peers_.push_back(make(io_, sockets_, parts_));
    peers_.back()->start(Clock::now());
    ++handled_;
  });
}

void Worker::churn(std::uint64_t pick, bool polite, MakePeer make) {
  asio::post(io_, [this, pick, polite, make = std::move(make)] {
    std::vector<SimPeer*> running;
    for (auto& p : peers_)
      if (p->status() == SimPeer::Status::running) running.push_back(p.get());
    if (!running.empty()) {
      running[pick % running.size()]->leave(polite, Clock::now());
      peers_.push_back(make(io_, sockets_, parts_));
      peers_.back()->start(Clock::now());
    }
    ++handled_;
  });
}

std::future<std::vector<nlohmann::json>> Worker::finish(std::string why) {
  auto promise = std::make_shared<std::promise<std::vector<nlohmann::json>>>();
  auto future = promise->get_future();
  asio::post(io_, [this, why = std::move(why), promise] {
    const auto now = Clock::now();
    std::vector<nlohmann::json> reports;
    for (auto& p : peers_) {
      p->give_up(why, now);
      reports.push_back(p->report());
    }
    stopping_ = true;
    tick_timer_.cancel();
    sockets_.close();
    guard_.reset();
    promise->set_value(std::move(reports));
  });
  return future;
}

void Worker::join() {
  if (thread_.joinable()) thread_.join();
  peers_.clear();
}

WorkerSnapshot Worker::snapshot() {
  std::lock_guard lock(mutex_);
  return snapshot_;
}

void Worker::tick() {
  if (stopping_) return;
  const auto now = Clock::now();
  sockets_.hold();
  // Most peers have nothing due: their ACKs go out as packets arrive, and their timers are long.
  for (auto& p : peers_)
    if (p->next_poll() <= now) p->poll(now);
  sockets_.release();
  sockets_.sweep();
  if (++ticks_ % kSnapshotEvery == 0) publish();
  tick_timer_.expires_after(kTick);
  tick_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec) tick();
  });
}

void Worker::publish() {
  WorkerSnapshot s;
  s.handled = handled_;
  for (const auto& p : peers_) {
    switch (p->status()) {
      case SimPeer::Status::running: ++s.running; break;
      case SimPeer::Status::complete: ++s.complete; break;
      case SimPeer::Status::failed: ++s.failed; break;
      case SimPeer::Status::left: ++s.left; break;
    }
    s.symbols += p->symbols_received();
    s.arrived += p->coded_arrived();
    s.lost += p->datagrams_lost();
    s.bytes += p->bytes_written();
    s.needed += p->symbols_needed();
  }
  std::lock_guard lock(mutex_);
  snapshot_ = s;
}

}  // namespace ncast::swarm
