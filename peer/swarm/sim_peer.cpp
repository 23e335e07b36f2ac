#include "peer/swarm/sim_peer.hpp"

#include <boost/asio/post.hpp>
#include <boost/system/system_error.hpp>

#include <algorithm>

#include "peer/counting_decoder.hpp"
#include "protocol/packets.hpp"

namespace ncast::swarm {
namespace {

namespace asio = boost::asio;

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

std::uint64_t splitmix(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// What every link shares; ServerLinks gives each its server and share.
peer::LinkOptions link_options(const SimPeerOptions& o) {
  peer::LinkOptions lo;
  lo.stream = o.stream;
  lo.window = o.window;
  lo.download = !o.realtime;
  lo.max_datagram = o.max_datagram;
  lo.stall_timeout = o.stall_timeout;
  lo.parts = o.parts;
  return lo;
}

// How the peer's segments are decoded: counted only, batched with other peers' (the batcher's call-back
// runs on its own thread, so the settling is posted to the peer's), or on the CPU alone.
std::shared_ptr<peer::DecoderFactory> decoders(const SimPeerOptions& o, asio::io_context& io,
                                               const std::function<void()>& on_decoded) {
  if (!o.verify) return peer::make_counting_decoder_factory();
  if (o.batcher) return o.batcher->factory([&io, on_decoded] { asio::post(io, on_decoded); });
  return peer::make_cpu_decoder_factory();
}

}  // namespace

SimPeer::SimPeer(asio::io_context& io, std::uint32_t id, SimPeerOptions options, Drop drop, SocketGroups& sockets)
    : io_(io),
      id_(id),
      options_(std::move(options)),
      drop_(std::move(drop)),
      sockets_(sockets),
      receiver_(
          {options_.window, false, std::chrono::milliseconds(500)},
          [this](std::span<const std::uint8_t>) {
            if (!playback_) playback_.emplace(static_cast<double>(receiver_.params().bitrate), options_.startup);
            // Called back while segment next_needed() is written (a counting peer has no bytes to give).
            const std::uint32_t segment = receiver_.next_needed();
            playback_->segment_written(receiver_.descriptor(segment).size, Clock::now(), receiver_.known_at(segment));
          },
          decoders(options_, io_, [this] { on_decoded(Clock::now()); })),
      links_(options_.servers, link_options(options_), receiver_),
      delay_timer_(io),
      jitter_state_(options_.seed ^ 0xA5A5A5A5u) {
  if (options_.servers.empty()) throw std::invalid_argument("a simulated peer needs a server");
  delayed_path_ = options_.delay.count() > 0 || options_.jitter.count() > 0;
  for (std::size_t i = 0; i < links_.size(); ++i)
    senders_.push_back([this, i](std::span<const std::uint8_t> d) { transmit(i, d); });
  place_ = sockets_.seat(*this, options_.servers, options_.socket_buffer);
}

SimPeer::~SimPeer() {
  // The timer's cancel() reports a failure only by throwing, and a destructor has no one to report it
  // to: the timer's own destruction, just after, cancels its wait all the same.
  try {
    delay_timer_.cancel();
  } catch (const boost::system::system_error&) {}
  sockets_.leave(*this, place_);
}

void SimPeer::start(TimePoint now) {
  started_ = now;
  for (std::size_t i = 0; i < links_.size(); ++i) links_[i].start(now, senders_[i]);
}

void SimPeer::on_datagram(std::span<std::uint8_t> d, const net::Address& from, TimePoint now) {
  if (status_ != Status::running) return;
  for (std::size_t i = 0; i < links_.size(); ++i) {
    if (links_[i].options().server != from) continue;
    if (!delayed_path_) return arrive(i, d, now);
    // The emulated path: the datagram arrives later, and only then meets the loss process.
    delayed_.push({delayed_until(now), delay_order_++, true, i, {d.begin(), d.end()}});
    arm_delay_timer();
    return;
  }
  ++unknown_source_;
}

void SimPeer::arrive(std::size_t link, std::span<std::uint8_t> d, TimePoint now) {
  const auto prefix = proto::parse_prefix(d);
  const bool coded = prefix && prefix->type == proto::PacketType::coded;
  coded_arrived_ += coded;
  if (drop_ && drop_(now)) {
    ++lost_;
    lost_coded_ += coded;
    return;
  }
  links_[link].on_datagram(d, now, senders_[link]);
}

void SimPeer::transmit(std::size_t link, std::span<const std::uint8_t> d) {
  if (!delayed_path_) return send_raw(link, d);
  delayed_.push({delayed_until(Clock::now()), delay_order_++, false, link, {d.begin(), d.end()}});
  arm_delay_timer();
}

void SimPeer::send_raw(std::size_t link, std::span<const std::uint8_t> d) {
  if (place_.group == nullptr) return;
  place_.group->send(place_.local, links_[link].options().server, d, send_errors_);
}

TimePoint SimPeer::delayed_until(TimePoint now) {
  auto d = options_.delay;
  if (options_.jitter.count() > 0) {
    // Uniform in [delay − jitter, delay + jitter], never negative: datagrams may overtake each other.
    const double u = static_cast<double>(splitmix(jitter_state_) >> 11) * 0x1.0p-53;
    d += std::chrono::microseconds(static_cast<long long>((2 * u - 1) * static_cast<double>(options_.jitter.count())));
  }
  return now + std::max(d, std::chrono::microseconds(0));
}

void SimPeer::arm_delay_timer() {
  if (delayed_.empty() || delayed_.top().due >= delay_timer_at_) return;
  delay_timer_at_ = delayed_.top().due;
  delay_timer_.expires_at(delay_timer_at_);
  delay_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec) return;
    delay_timer_at_ = TimePoint::max();
    run_delayed();
  });
}

void SimPeer::run_delayed() {
  const TimePoint now = Clock::now();
  while (!delayed_.empty() && delayed_.top().due <= now && status_ == Status::running) {
    Delayed d = std::move(const_cast<Delayed&>(delayed_.top()));
    delayed_.pop();
    if (d.inbound) arrive(d.link, d.bytes, now);
    else send_raw(d.link, d.bytes);
  }
  after_input(now);
  if (status_ == Status::running) arm_delay_timer();
}

void SimPeer::poll(TimePoint now) {
  if (status_ != Status::running) return;
  // Only a batched decoder leaves segments decoding; with the others a segment settles as it completes.
  if (options_.batcher && options_.verify) on_decoded(now);
  if (status_ != Status::running) return;
  for (std::size_t i = 0; i < links_.size(); ++i) links_[i].poll(now, senders_[i]);
  after_input(now);
}

TimePoint SimPeer::earliest_poll() const {
  // A batched decoder's results are settled by poll() too.
  if (options_.batcher && options_.verify) return TimePoint::min();
  TimePoint at = TimePoint::max();
  for (std::size_t i = 0; i < links_.size(); ++i) at = std::min(at, links_[i].next_poll());
  return at;
}

void SimPeer::on_decoded(TimePoint now) {
  if (status_ != Status::running || receiver_.settle_decoded(now) == 0) return;
  // As when a symbol completes a segment: the servers stop sending it now.
  for (std::size_t i = 0; i < links_.size(); ++i) links_[i].acknowledge(now, senders_[i]);
  after_input(now);
}

void SimPeer::after_input(TimePoint now) {
  if (status_ != Status::running) return;
  links_.check_server_ids();
  if (receiver_.complete()) {
    completed_at_ = now;
    // The stop signal and goodbye go out at once, whatever the emulated delay.
    for (std::size_t i = 0; i < links_.size(); ++i)
      links_[i].close([this, i](std::span<const std::uint8_t> d) { send_raw(i, d); }, proto::ByeReason::done);
    return finish(Status::complete, now);
  }
  if (links_.all_failed()) {
    failure_ = links_.failures();
    return finish(Status::failed, now);
  }
  next_poll_ = earliest_poll();
}

void SimPeer::leave(bool polite, TimePoint now) {
  if (status_ != Status::running) return;
  if (polite)
    for (std::size_t i = 0; i < links_.size(); ++i)
      links_[i].close([this, i](std::span<const std::uint8_t> d) { send_raw(i, d); }, proto::ByeReason::shutdown);
  finish(Status::left, now);
}

void SimPeer::give_up(const std::string& why, TimePoint now) {
  if (status_ != Status::running) return;
  failure_ = why;
  for (std::size_t i = 0; i < links_.size(); ++i)
    links_[i].close([this, i](std::span<const std::uint8_t> d) { send_raw(i, d); }, proto::ByeReason::shutdown);
  finish(Status::failed, now);
}

void SimPeer::finish(Status status, TimePoint now) {
  status_ = status;
  next_poll_ = TimePoint::max();
  ended_ = now;
  receiver_.finish(now);
  // Free the seat and the pending work: a finished peer costs nothing more.
  delay_timer_.cancel();
  delayed_ = {};
  sockets_.leave(*this, place_);
}

nlohmann::json SimPeer::report() const {
  const auto& s = receiver_.stats();
  nlohmann::json j;
  j["id"] = id_;
  j["mode"] = options_.realtime ? "realtime" : "download";
  j["verifies"] = options_.verify;
  j["address"] = place_.local.to_string();  // as its servers see it
  const char* status = "running";
  switch (status_) {
    case Status::running: status = "running"; break;
    case Status::complete: status = "complete"; break;
    case Status::failed: status = "failed"; break;
    case Status::left: status = "left"; break;
  }
  j["status"] = status;
  if (!failure_.empty()) j["failure"] = failure_;
  j["run_s"] = seconds((status_ == Status::running ? Clock::now() : ended_) - started_);
  j["time_to_first_segment_s"] = receiver_.first_segment_at()
                                     ? nlohmann::json(seconds(*receiver_.first_segment_at() - started_))
                                     : nlohmann::json(nullptr);
  j["completion_s"] = completed_at_ ? nlohmann::json(seconds(*completed_at_ - started_)) : nlohmann::json(nullptr);
  j["segments"] = s.segments_written;
  // A verifying peer writes a segment only once its SHA-256 matched.
  j["segments_verified"] = options_.verify ? s.segments_written : 0;
  j["bytes"] = s.bytes_written;
  j["symbols_received"] = s.symbols;
  j["symbols_arrived"] = coded_arrived_;
  j["symbols_lost"] = lost_coded_;
  j["symbols_needed"] = s.symbols_needed;
  j["non_innovative"] = s.non_innovative;
  j["after_decode"] = s.after_decode;
  j["out_of_window"] = s.out_of_window;
  j["hash_failures"] = s.hash_failures;
  j["datagrams_lost"] = lost_;
  j["late_segments"] = playback_ ? playback_->late() : 0;
  j["stalls"] = playback_ ? playback_->late() : 0;
  j["stall_s"] = playback_ ? playback_->stall_seconds() : 0.0;
  const auto first_late = playback_ ? playback_->first_late_at() : std::nullopt;
  j["first_late_s"] = first_late ? nlohmann::json(seconds(*first_late - started_)) : nlohmann::json(nullptr);
  const auto slack = playback_ ? playback_->least_slack_s() : std::nullopt;
  j["least_slack_s"] = slack ? nlohmann::json(*slack) : nlohmann::json(nullptr);
  std::uint64_t bad = 0, rejoins = 0;
  for (std::size_t i = 0; i < links_.size(); ++i) {
    const auto& c = links_[i].counters();
    bad += c.drops.total() - c.drops[proto::DropReason::unexpected];
    rejoins += c.rejoins;
  }
  j["bad_packets"] = bad + s.rejected + unknown_source_;
  j["rejoins"] = rejoins;
  j["send_errors"] = send_errors_;
  return j;
}

}  // namespace ncast::swarm
