#pragma once
// A peer's links to every server of its stream, on one StreamReceiver: each server supplies an equal
// share of the symbols and the first also the source symbols. Two servers with one server id would
// send the same coded symbols, so the later link fails; when every link has failed the peer can
// only give up.
#include <cstddef>
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
  // Each link's failure, "ADDRESS: why" joined by "; ".
  std::string failures() const;

 private:
  std::vector<std::unique_ptr<ServerLink>> links_;
};

}  // namespace ncast::peer
