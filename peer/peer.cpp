#include "peer/peer.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include <cstdio>
#include <memory>
#include <set>
#include <stdexcept>

#include "cli/subcommands.hpp"
#include "net/udp_socket.hpp"
#include "peer/peer_output.hpp"
#include "peer/peer_relay.hpp"
#include "peer/peer_report.hpp"
#include "peer/progress_bar.hpp"
#include "peer/server_links.hpp"
#include "peer/simulated_loss.hpp"
#include "peer/stream_receiver.hpp"

namespace ncast::peer {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
constexpr auto kTick = 5ms;

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// What every link shares; ServerLinks gives each its server and share.
LinkOptions common_link_options(const PeerOptions& o) {
  LinkOptions lo;
  lo.stream = o.stream;
  lo.start_segment = o.live_edge ? proto::kLiveEdge : o.start_segment;
  lo.window = o.window;
  lo.download = o.download;
  lo.max_datagram = o.max_datagram;
  lo.max_rate_kbps = static_cast<std::uint32_t>(o.max_rate / 1000);
  lo.pinned = o.server_key;
  lo.stall_timeout = o.stall_timeout;
  return lo;
}

std::unique_ptr<net::UdpSocket> open_socket(asio::io_context& io, const PeerOptions& o) {
  if (o.servers.empty()) throw std::runtime_error("no server to join");
  const net::Address& first = o.servers.front();
  net::Address bind;
  bind.family = first.family;
  // A loopback server is reached from loopback; anything else from the wildcard address.
  if (first.is_loopback()) bind.ip = first.ip;
  return std::make_unique<net::UdpSocket>(io, bind, 4 << 20, o.max_datagram);
}

void print_line(const nlohmann::json& j) {
  std::fprintf(stderr, "%s\n", j.dump().c_str());
  std::fflush(stderr);
}

// Joins the servers and runs the receive loop and the timer tick until complete, failed, timed out or
// interrupted; the parts it drives each do one job (peer_output, server_links, peer_relay, ...).
class Peer {
 public:
  Peer(const PeerOptions& o, std::shared_ptr<DecoderFactory> decoders)
      : o_(o),
        output_(o.output, o.force),
        receiver_(
            {o.window, o.relay.has_value(), o.stall_threshold, o.relay_memory, o.origin_key},
            [this](std::span<const std::uint8_t> d) { output_.write(d); }, std::move(decoders)),
        socket_(open_socket(io_, o)),
        links_(o.servers, common_link_options(o), receiver_),
        relay_(io_, receiver_, {o.relay, o.relay_id, o.max_rate, o.relay_linger_s}),
        progress_(o.stream, receiver_),
        loss_(o.loss, o.seed),
        tick_timer_(io_),
        signals_(io_, SIGINT, SIGTERM) {}

  PeerResult run() {
    started_ = Clock::now();
    for (std::size_t i = 0; i < links_.size(); ++i) links_[i].start(started_, sender(i));
    read();
    tick();
    signals_.async_wait([this](const boost::system::error_code& ec, int) {
      if (ec) return;
      interrupted_ = true;
      stop("interrupted");
    });
    io_.run();
    if (o_.progress) ProgressBar::finish();
    receiver_.finish(Clock::now());
    PeerResult r;
    r.exit_code = interrupted_ ? cli::kExitInterrupted : completed_at_ && failure_.empty() ? 0 : 1;
    r.report =
        peer_report({o_.stream, started_, completed_at_, failure_, loss_.dropped(), unknown_source_, relay_.report()},
                    receiver_, links_);
    return r;
  }

 private:
  ServerLink::Send sender(std::size_t link) {
    const net::Address to = links_[link].options().server;
    return [this, to](std::span<const std::uint8_t> d) { socket_->send_now(d, to); };
  }

  // Only a complete stream takes the output's name, as soon as it is complete (a relay lingers on,
  // and may be interrupted then); otherwise Output removes what it wrote.
  void keep_output() {
    if (output_.failed()) return;  // tick() stops with the write's error
    try {
      output_.commit();
    } catch (const std::runtime_error& e) {
      stop(e.what());
    }
  }

  void read() {
    socket_->asio().async_wait(asio::ip::udp::socket::wait_read, [this](const boost::system::error_code& ec) {
      if (ec || stopped_) return;
      const TimePoint now = Clock::now();
      socket_->receive(
          [&](std::span<std::uint8_t> d, const net::Address& from, TimePoint) { on_datagram(d, from, now); });
      after_input(now);
      read();
    });
  }

  void on_datagram(std::span<std::uint8_t> d, const net::Address& from, TimePoint now) {
    const auto link = links_.find(from);
    if (!link) {
      ++unknown_source_;
      return;
    }
    if (loss_.drop()) return;
    // A segment at full rank is the stop signal for every server, not only for the one whose symbol
    // brought it there.
    if (links_[*link].on_datagram(d, now, sender(*link)))
      for (std::size_t other = 0; other < links_.size(); ++other)
        if (other != *link) links_[other].acknowledge(now, sender(other));
  }

  void after_input(TimePoint now) {
    links_.check_server_ids();
    links_.rebalance(now, [this](std::size_t i) { return sender(i); });
    drop_polluters();
    report_forgers();
    if (const auto& conflict = receiver_.origins().conflict()) stop(*conflict);
    relay_.after_input();
    check_done(now);
  }

  // A source caught polluting is said goodbye to and reported; its symbols are ignored anyway.
  void drop_polluters() {
    for (const std::uint32_t id : receiver_.take_new_polluters()) {
      const nlohmann::json event = polluter_event(id, receiver_, links_);
      for (std::size_t i = 0; i < links_.size(); ++i) {
        if (links_[i].server_id() != id) continue;
        links_[i].close(sender(i), proto::ByeReason::protocol_error);
        links_[i].fail("sent coded symbols that contradict the segments' SHA-256 (pollution)");
      }
      print_line(event);
    }
  }

  // A source caught forging its origin's material was dropped by its link; the event says so once.
  void report_forgers() {
    for (std::size_t i = 0; i < links_.size(); ++i) {
      if (!links_[i].forged() || forgers_reported_.count(i)) continue;
      forgers_reported_.insert(i);
      print_line(
          {{"event", "forger"}, {"address", links_[i].options().server.to_string()}, {"why", links_[i].failure()}});
    }
  }

  void tick() {
    const TimePoint now = Clock::now();
    for (std::size_t i = 0; i < links_.size(); ++i) links_[i].poll(now, sender(i));
    after_input(now);
    if (output_.failed()) stop("cannot write the output: " + output_.error());
    if (o_.timeout_s > 0 && seconds(now - started_) > o_.timeout_s) stop("timed out");
    if (links_.all_failed() && !completed_at_) stop(links_.failures());
    if (o_.progress) progress_.update(now, started_);
    if (stopped_) return;
    tick_timer_.expires_after(kTick);
    tick_timer_.async_wait([this](const boost::system::error_code& ec) {
      if (!ec) tick();
    });
  }

  void check_done(TimePoint now) {
    if (stopped_) return;
    if (receiver_.complete() && !completed_at_) {
      completed_at_ = now;
      for (std::size_t i = 0; i < links_.size(); ++i) links_[i].close(sender(i), proto::ByeReason::done);
      keep_output();
    }
    if (completed_at_ && relay_.finished(*completed_at_, now)) stop("");
  }

  void stop(const std::string& why) {
    if (stopped_) return;
    stopped_ = true;
    if (!why.empty() && failure_.empty()) failure_ = why;
    for (std::size_t i = 0; i < links_.size(); ++i) links_[i].close(sender(i), proto::ByeReason::shutdown);
    tick_timer_.cancel();
    signals_.cancel();
    boost::system::error_code ignore;
    socket_->asio().cancel(ignore);
    relay_.shutdown([this] { io_.stop(); });
  }

  PeerOptions o_;
  asio::io_context io_;
  Output output_;
  StreamReceiver receiver_;
  std::unique_ptr<net::UdpSocket> socket_;
  ServerLinks links_;
  PeerRelay relay_;
  ProgressBar progress_;
  SimulatedLoss loss_;
  asio::steady_timer tick_timer_;
  asio::signal_set signals_;
  std::uint64_t unknown_source_ = 0;
  std::set<std::size_t> forgers_reported_;

  TimePoint started_{};
  std::optional<TimePoint> completed_at_;
  bool stopped_ = false, interrupted_ = false;
  std::string failure_;
};

}  // namespace

PeerResult run_peer(const PeerOptions& options, std::shared_ptr<DecoderFactory> decoders) {
  Peer peer(options, std::move(decoders));
  return peer.run();
}

}  // namespace ncast::peer
