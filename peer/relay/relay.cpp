#include "peer/relay/relay.hpp"

#include <algorithm>
#include <chrono>
#include <utility>

#include "protocol/packets.hpp"
#include "server/server.hpp"

namespace ncast::peer {

using namespace std::chrono_literals;

Relay::Relay(boost::asio::io_context& io, const StreamReceiver& receiver, const net::Address& listen,
             std::uint32_t relay_id, double max_rate_bps)
    : receiver_(receiver), identity_(proto::Ed25519Identity::generate()), source_(receiver, relay_id) {
  server::ServerConfig cfg;
  cfg.listen = listen;
  const auto& p = receiver.params();
  cfg.max_datagram = static_cast<std::uint16_t>(
      std::clamp<std::size_t>(proto::coded_packet_size(p.n, p.symbol_size), proto::kMinDatagram, proto::kMaxDatagram));
  if (max_rate_bps > 0) cfg.session_rate = max_rate_bps / 8;
  cfg.idle_timeout_ms = 5000;
  server_ = std::make_unique<server::Server>(io, cfg, identity_);
  server_->add_stream(source_);
  server_->start();
}

Relay::~Relay() = default;

nlohmann::json Relay::announcement() const {
  return {{"event", "relay"},
          {"address", server_->local().to_string()},
          {"port", server_->local().port},
          {"relay_id", source_.info().server_id},
          {"identity", proto::to_hex(identity_.public_key())}};
}

void Relay::wake() {
  const auto innovative = receiver_.stats().innovative;
  const auto known = receiver_.known();
  if (innovative == innovative_ && known == known_ && receiver_.final_seen() == final_) return;
  innovative_ = innovative;
  known_ = known;
  final_ = receiver_.final_seen();
  server_->stream_changed(source_);
}

bool Relay::idle(TimePoint completed_at, TimePoint now) {
  const bool served = server_->metrics().sessions_created > 0;
  if (server_->session_count() > 0) busy_at_ = now;
  return served && now - std::max(busy_at_, completed_at) > 500ms;
}

void Relay::shutdown(std::function<void()> done) { server_->shutdown(std::move(done)); }

nlohmann::json Relay::report() const {
  const auto& m = server_->metrics();
  const auto& s = receiver_.stats();
  return {{"address", server_->local().to_string()},
          {"sessions", m.sessions_created},
          {"recoded", source_.recoded()},
          {"segments_completed", m.segments_completed},
          {"kept_bytes", s.kept_bytes},
          {"kept_peak_bytes", s.kept_peak_bytes},
          {"evicted", s.evicted}};
}

}  // namespace ncast::peer
