#include "peer/peer.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <stdexcept>

#include "net/udp_socket.hpp"
#include "peer/relay/relay.hpp"
#include "peer/server_link.hpp"
#include "peer/stream_receiver.hpp"

namespace ncast::peer {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
constexpr auto kTick = 5ms;

// Where the decoded stream goes: a new file, standard output, or nowhere.
class Output {
 public:
  Output(const std::string& path, bool force) {
    if (path.empty()) return;
    if (path == "-") {
      fd_ = STDOUT_FILENO;
      return;
    }
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | (force ? O_TRUNC : O_EXCL), 0644);
    if (fd_ < 0)
      throw std::runtime_error("cannot create " + path + ": " + std::strerror(errno) +
                               (errno == EEXIST ? " (use --force to overwrite)" : ""));
    owned_ = true;
  }
  ~Output() {
    if (owned_) ::close(fd_);
  }
  Output(const Output&) = delete;
  Output& operator=(const Output&) = delete;

  void write(std::span<const std::uint8_t> data) {
    if (fd_ < 0 || closed_) return;
    std::size_t done = 0;
    while (done < data.size()) {
      const ssize_t n = ::write(fd_, data.data() + done, data.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        closed_ = true;  // EPIPE (the player quit) or a full disk: stop writing, report it
        error_ = std::strerror(errno);
        return;
      }
      done += static_cast<std::size_t>(n);
    }
  }
  bool failed() const { return closed_; }
  const std::string& error() const { return error_; }

 private:
  int fd_ = -1;
  bool owned_ = false, closed_ = false;
  std::string error_;
};

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

nlohmann::json drops_json(const proto::DropCounters& d) {
  nlohmann::json j = nlohmann::json::object();
  for (std::size_t i = 0; i < proto::kDropReasonCount; ++i) {
    const auto r = static_cast<proto::DropReason>(i);
    if (d[r]) j[std::string(proto::to_string(r))] = d[r];
  }
  return j;
}

class Peer {
 public:
  Peer(const PeerOptions& o, std::shared_ptr<DecoderFactory> decoders)
      : o_(o),
        output_(o.output, o.force),
        receiver_(
            {o.window, o.relay.has_value(), o.stall_threshold, o.relay_memory},
            [this](std::span<const std::uint8_t> d) { output_.write(d); }, std::move(decoders)),
        tick_timer_(io_),
        signals_(io_, SIGINT, SIGTERM),
        rng_(o.seed ? o.seed : std::random_device{}()),
        loss_(std::clamp(o.loss, 0.0, 1.0)) {
    if (o.servers.empty()) throw std::runtime_error("no server to join");
    const net::Address& first = o.servers.front();
    net::Address bind;
    bind.family = first.family;
    // A loopback server is reached from loopback; anything else from the wildcard address.
    if (first.is_loopback()) bind.ip = first.ip;
    socket_ = std::make_unique<net::UdpSocket>(io_, bind, 4 << 20, o.max_datagram);
    const std::size_t k = o.servers.size();
    for (std::size_t i = 0; i < k; ++i) {
      LinkOptions lo;
      lo.server = o.servers[i];
      lo.stream = o.stream;
      lo.start_segment = o.live_edge ? proto::kLiveEdge : o.start_segment;
      lo.window = o.window;
      // Each server supplies an equal part; only the first sends source symbols.
      lo.share = static_cast<std::uint16_t>(proto::kFullShare / k + (i < proto::kFullShare % k ? 1 : 0));
      lo.systematic = i == 0;
      lo.download = o.download;
      lo.max_datagram = o.max_datagram;
      lo.max_rate_kbps = static_cast<std::uint32_t>(o.max_rate / 1000);
      lo.pinned = o.server_key;
      lo.stall_timeout = o.stall_timeout;
      links_.push_back(std::make_unique<ServerLink>(lo, receiver_));
    }
  }

  PeerResult run() {
    started_ = Clock::now();
    for (auto& l : links_) l->start(started_, sender(*l));
    read();
    tick();
    signals_.async_wait([this](const boost::system::error_code& ec, int) {
      if (!ec) stop("interrupted");
    });
    io_.run();
    if (o_.progress) std::fputc('\n', stderr);
    receiver_.finish(Clock::now());
    PeerResult r;
    r.exit_code = completed_at_ && failure_.empty() ? 0 : 1;
    r.report = report();
    return r;
  }

 private:
  ServerLink::Send sender(const ServerLink& link) {
    const net::Address to = link.options().server;
    return [this, to](std::span<const std::uint8_t> d) { socket_->send_now(d, to); };
  }

  void read() {
    socket_->asio().async_wait(asio::ip::udp::socket::wait_read, [this](const boost::system::error_code& ec) {
      if (ec || stopped_) return;
      const TimePoint now = Clock::now();
      socket_->receive([&](std::span<std::uint8_t> d, const net::Address& from) { on_datagram(d, from, now); });
      after_input(now);
      read();
    });
  }

  void on_datagram(std::span<std::uint8_t> d, const net::Address& from, TimePoint now) {
    for (auto& l : links_) {
      if (l->options().server != from) continue;
      if (loss_(rng_)) {
        ++simulated_losses_;
        return;
      }
      // A completed segment is the stop signal for every server, not only for the one whose symbol
      // completed it.
      if (l->on_datagram(d, now, sender(*l)))
        for (auto& other : links_)
          if (other != l) other->acknowledge(now, sender(*other));
      return;
    }
    ++unknown_source_;
  }

  void after_input(TimePoint now) {
    check_server_ids();
    drop_polluters();
    if (receiver_.adopted() && o_.relay && !relay_) start_relay();
    if (relay_) relay_->wake();
    check_done(now);
  }

  void check_server_ids() {
    for (std::size_t i = 0; i < links_.size(); ++i)
      for (std::size_t j = 0; j < i; ++j)
        if (links_[i]->state() == ServerLink::State::established && links_[j]->server_id() &&
            links_[i]->server_id() == links_[j]->server_id())
          links_[i]->fail("server id " + std::to_string(*links_[i]->server_id()) + " is also used by " +
                          links_[j]->options().server.to_string() + ": its symbols would repeat");
  }

  // A source caught polluting is said goodbye to and reported; its symbols are ignored anyway.
  void drop_polluters() {
    for (const std::uint32_t id : receiver_.take_new_polluters()) {
      nlohmann::json j{{"event", "polluter"}, {"server_id", id}, {"segment", receiver_.polluters().at(id).segment}};
      for (auto& l : links_) {
        if (l->server_id() != id) continue;
        j["address"] = l->options().server.to_string();
        l->close(sender(*l), proto::ByeReason::protocol_error);
        l->fail("sent coded symbols that contradict the segments' SHA-256 (pollution)");
      }
      std::fprintf(stderr, "%s\n", j.dump().c_str());
      std::fflush(stderr);
    }
  }

  void start_relay() {
    relay_ = std::make_unique<Relay>(io_, receiver_, *o_.relay, o_.relay_id.value_or(proto::random_u32()), o_.max_rate);
    std::fprintf(stderr, "%s\n", relay_->announcement().dump().c_str());
    std::fflush(stderr);
  }

  void tick() {
    const TimePoint now = Clock::now();
    for (auto& l : links_) l->poll(now, sender(*l));
    after_input(now);
    if (output_.failed()) stop("cannot write the output: " + output_.error());
    if (o_.timeout_s > 0 && seconds(now - started_) > o_.timeout_s) stop("timed out");
    const bool all_failed = std::all_of(links_.begin(), links_.end(),
                                        [](const auto& l) { return l->state() == ServerLink::State::failed; });
    if (all_failed && !completed_at_) {
      std::string why;
      for (auto& l : links_) why += (why.empty() ? "" : "; ") + l->options().server.to_string() + ": " + l->failure();
      stop(why);
    }
    if (o_.progress && now - last_progress_ > 200ms) progress(now);
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
      for (auto& l : links_) l->close(sender(*l), proto::ByeReason::done);
    }
    if (!completed_at_) return;
    if (!relay_) return stop("");
    // Keep relaying while downstream peers are still being served.
    if (relay_->idle(*completed_at_, now) || seconds(now - *completed_at_) > o_.relay_linger_s) stop("");
  }

  void stop(const std::string& why) {
    if (stopped_) return;
    stopped_ = true;
    if (!why.empty() && failure_.empty()) failure_ = why;
    for (auto& l : links_) l->close(sender(*l), proto::ByeReason::shutdown);
    tick_timer_.cancel();
    signals_.cancel();
    boost::system::error_code ignore;
    socket_->asio().cancel(ignore);
    if (relay_) relay_->shutdown([this] { io_.stop(); });
    else io_.stop();
  }

  void progress(TimePoint now) {
    last_progress_ = now;
    const auto& s = receiver_.stats();
    const std::uint32_t total = receiver_.known(), start = receiver_.adopted() ? receiver_.params().start_segment : 0;
    const std::uint32_t done = receiver_.next_needed() - std::min(receiver_.next_needed(), start);
    const std::uint32_t of = total > start ? total - start : 0;
    const double frac = of ? static_cast<double>(done) / of : 0.0;
    const int width = 30, filled = static_cast<int>(frac * width);
    const double rate = s.bytes_written / std::max(1e-3, seconds(now - started_)) / 1e6;
    std::fprintf(stderr, "\r%s [%.*s%*s] %3.0f%% %u/%u%s segments %.2f MB/s ", o_.stream.c_str(), filled,
                 "##############################", width - filled, "", 100 * frac, done, of,
                 receiver_.final_seen() ? "" : "+", rate);
    std::fflush(stderr);
  }

  nlohmann::json report() const {
    const auto& s = receiver_.stats();
    nlohmann::json j;
    j["event"] = "report";
    j["stream"] = o_.stream;
    j["decoder"] = receiver_.decoders().description();
    j["complete"] = completed_at_.has_value() && failure_.empty();
    if (!failure_.empty()) j["failure"] = failure_;
    j["segments"] = s.segments_written;
    j["bytes"] = s.bytes_written;
    j["time_to_first_segment_s"] = receiver_.first_segment_at()
                                       ? nlohmann::json(seconds(*receiver_.first_segment_at() - started_))
                                       : nlohmann::json(nullptr);
    j["completion_s"] = completed_at_ ? nlohmann::json(seconds(*completed_at_ - started_)) : nlohmann::json(nullptr);
    j["symbols_received"] = s.symbols;
    j["symbols_needed"] = s.symbols_needed;
    j["overhead"] = s.symbols_needed ? static_cast<double>(s.symbols) / static_cast<double>(s.symbols_needed) : 0.0;
    j["innovative"] = s.innovative;
    j["non_innovative"] = s.non_innovative;
    j["after_decode"] = s.after_decode;
    j["out_of_window"] = s.out_of_window;
    j["hash_failures"] = s.hash_failures;
    j["recovered"] = s.recovered;
    j["held_back"] = s.held_back;
    j["from_polluters"] = s.from_polluters;
    nlohmann::json polluters = nlohmann::json::array();
    for (const auto& [id, p] : receiver_.polluters()) {
      nlohmann::json pj{
          {"server_id", id}, {"segment", p.segment}, {"segments", p.segments}, {"bad_symbols", p.bad_symbols}};
      for (const auto& l : links_)
        if (l->server_id() == id) pj["address"] = l->options().server.to_string();
      polluters.push_back(pj);
    }
    j["polluters"] = polluters;
    j["stalls"] = s.stalls;
    j["stall_s"] = s.stall_seconds;
    j["simulated_losses"] = simulated_losses_;
    std::uint64_t bad = 0, rejoins = 0;
    nlohmann::json servers = nlohmann::json::array();
    for (const auto& l : links_) {
      const auto& c = l->counters();
      // Early arrivals for a session whose MANIFEST was lost are dropped too, but are not bad.
      bad += c.drops.total() - c.drops[proto::DropReason::unexpected];
      rejoins += c.rejoins;
      nlohmann::json sj{{"address", l->options().server.to_string()},
                        {"packets", c.packets},
                        {"coded", c.coded},
                        {"acks", c.acks_sent},
                        {"handshakes", c.handshakes},
                        {"rejoins", c.rejoins},
                        {"drops", drops_json(c.drops)}};
      if (l->server_id()) sj["server_id"] = *l->server_id();
      if (l->identity()) sj["identity"] = proto::to_hex(*l->identity());
      if (l->state() == ServerLink::State::failed) sj["failure"] = l->failure();
      servers.push_back(sj);
    }
    j["bad_packets"] = bad + s.rejected + unknown_source_;
    j["rejoins"] = rejoins;
    j["servers"] = servers;
    if (relay_) j["relay"] = relay_->report();
    return j;
  }

  PeerOptions o_;
  asio::io_context io_;
  Output output_;
  StreamReceiver receiver_;
  std::unique_ptr<net::UdpSocket> socket_;
  std::vector<std::unique_ptr<ServerLink>> links_;
  asio::steady_timer tick_timer_;
  asio::signal_set signals_;
  std::mt19937_64 rng_;
  std::bernoulli_distribution loss_;
  std::uint64_t simulated_losses_ = 0, unknown_source_ = 0;

  std::unique_ptr<Relay> relay_;

  TimePoint started_{}, last_progress_{};
  std::optional<TimePoint> completed_at_;
  bool stopped_ = false;
  std::string failure_;
};

}  // namespace

PeerResult run_peer(const PeerOptions& options, std::shared_ptr<DecoderFactory> decoders) {
  Peer peer(options, std::move(decoders));
  return peer.run();
}

}  // namespace ncast::peer
