#pragma once
// A peer's relay: the server core serving what this peer has received so far, recoded, to downstream peers.
// The only part of peer/ that uses server/.
#include <boost/asio/io_context.hpp>

#include <cstdint>
#include <functional>
#include <memory>

#include <nlohmann/json.hpp>

#include "net/address.hpp"
#include "peer/relay/relay_source.hpp"
#include "peer/stream_receiver.hpp"
#include "protocol/crypto.hpp"

namespace ncast::server {
class Server;
}

namespace ncast::peer {

class Relay {
 public:
  // The receiver must have adopted its stream. max_rate_bps caps each downstream session (0: no cap).
  Relay(boost::asio::io_context& io, const StreamReceiver& receiver, const net::Address& listen, std::uint32_t relay_id,
        double max_rate_bps);
  ~Relay();
  Relay(const Relay&) = delete;
  Relay& operator=(const Relay&) = delete;

  // The "relay" event a peer prints once its relay listens.
  nlohmann::json announcement() const;
  // Tells the server core when the receiver has more to offer than at the last call.
  void wake();
  // True once downstream peers were served and none has had a session for a while since completed_at.
  bool idle(TimePoint completed_at, TimePoint now);
  void shutdown(std::function<void()> done);
  nlohmann::json report() const;

 private:
  const StreamReceiver& receiver_;
  proto::Ed25519Identity identity_;
  RelaySource source_;
  std::unique_ptr<server::Server> server_;
  std::uint64_t innovative_ = 0;
  std::uint32_t known_ = 0;
  bool final_ = false;
  TimePoint busy_at_{};
};

}  // namespace ncast::peer
