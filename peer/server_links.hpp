#pragma once
// A peer's links to every server of its stream, on one StreamReceiver: each server supplies an equal
// share of the symbols and the first also the source symbols. Two servers with one server id would
// send the same coded symbols, so the later link fails; when every link has failed the peer can
// only give up. A server gone silent while the others send has its share taken over by them, and
// given back when it sends again.
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "net/address.hpp"
#include "peer/server_link.hpp"
#include "peer/stream_receiver.hpp"

namespace ncast::peer {

class ServerLinks {
 public:
  // common: what every link shares; its server, share and systematic are set per server here.
  ServerLinks(const std::vector<net::Address>& servers, const LinkOptions& common, StreamReceiver& receiver);

  std::size_t size() const { return links_.size(); }
  ServerLink& operator[](std::size_t i) { return *links_[i]; }
  const ServerLink& operator[](std::size_t i) const { return *links_[i]; }
  // The link to this server address.
  std::optional<std::size_t> find(const net::Address& server) const;
  // The address of the link whose server has this id, if one has.
  std::optional<std::string> address_of(std::uint32_t server_id) const;

  // Fails an established link whose server id another link already has.
  void check_server_ids();
  bool all_failed() const;
  // Failover: a link is live when established and heard from within kDeadAfter of the link heard
  // last (or while joining for the first time). When the live set changes, the live links share the
  // symbols equally (the first of them also the source symbols), each by a new session
  // (ServerLink::reshare). Silence of every link (a stream waiting for its next segment) changes nothing.
  static constexpr std::chrono::milliseconds kDeadAfter{400};
  void rebalance(TimePoint now, const std::function<ServerLink::Send(std::size_t)>& sender);
  // How many times the shares were handed round again.
  std::uint64_t failovers() const { return failovers_; }
  // Each link's failure, "ADDRESS: why" joined by "; ".
  std::string failures() const;

 private:
  std::vector<std::unique_ptr<ServerLink>> links_;
  std::vector<bool> live_;  // as the shares were last handed round
  std::uint64_t failovers_ = 0;
};

}  // namespace ncast::peer
