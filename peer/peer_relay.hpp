#pragma once
// The relay's lifetime in a peer (ncast-peer --relay): it starts once the stream is adopted and
// announces itself, hears after each input that there may be more to recode, outlives completion
// while downstream peers are still served (up to the linger time), and is shut down last.
#include <boost/asio/io_context.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include <nlohmann/json.hpp>

#include "net/address.hpp"
#include "peer/relay/relay.hpp"
#include "peer/stream_receiver.hpp"

namespace ncast::peer {

struct PeerRelayOptions {
  std::optional<net::Address> listen;     // none: the peer does not relay
  std::optional<std::uint32_t> relay_id;  // none: a random one
  double max_rate_bps = 0;
  double linger_s = 30;
};

class PeerRelay {
 public:
  PeerRelay(boost::asio::io_context& io, const StreamReceiver& receiver, PeerRelayOptions options)
      : io_(io), receiver_(receiver), options_(options) {}

  // After input: starts the relay once the stream is adopted, and wakes it.
  void after_input();
  // Whether the peer, complete since completed_at, may stop: no relay, or its downstream peers are
  // done or have had the linger time.
  bool finished(TimePoint completed_at, TimePoint now);
  // Calls done once the relay, if any, has said goodbye to its downstream peers.
  void shutdown(const std::function<void()>& done);
  // The relay's report; null without a relay.
  nlohmann::json report() const;

 private:
  boost::asio::io_context& io_;
  const StreamReceiver& receiver_;
  PeerRelayOptions options_;
  std::unique_ptr<Relay> relay_;
};

}  // namespace ncast::peer
