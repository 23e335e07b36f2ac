#include "peer/server_links.hpp"

#include <algorithm>

namespace ncast::peer {

ServerLinks::ServerLinks(const std::vector<net::Address>& servers, const LinkOptions& common,
                         StreamReceiver& receiver) {
  const std::size_t k = servers.size();
  for (std::size_t i = 0; i < k; ++i) {
    LinkOptions lo = common;
    lo.server = servers[i];
    lo.share = static_cast<std::uint16_t>(proto::kFullShare / k + (i < proto::kFullShare % k ? 1 : 0));
    lo.systematic = i == 0;
    links_.push_back(std::make_unique<ServerLink>(lo, receiver));
  }
}

std::optional<std::size_t> ServerLinks::find(const net::Address& server) const {
  for (std::size_t i = 0; i < links_.size(); ++i)
    if (links_[i]->options().server == server) return i;
  return std::nullopt;
}

std::optional<std::string> ServerLinks::address_of(std::uint32_t server_id) const {
  std::optional<std::string> found;
  // Two links may have it (the later one failed): the later is named.
  for (const auto& l : links_)
    if (l->server_id() == server_id) found = l->options().server.to_string();
  return found;
}

void ServerLinks::check_server_ids() {
  for (std::size_t i = 0; i < links_.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (links_[i]->state() == ServerLink::State::established && links_[j]->server_id() &&
          links_[i]->server_id() == links_[j]->server_id())
        links_[i]->fail("server id " + std::to_string(*links_[i]->server_id()) + " is also used by " +
                        links_[j]->options().server.to_string() + ": its symbols would repeat");
}

bool ServerLinks::all_failed() const {
  return std::all_of(links_.begin(), links_.end(),
                     [](const auto& l) { return l->state() == ServerLink::State::failed; });
}

std::string ServerLinks::failures() const {
  std::string why;
  for (const auto& l : links_) why += (why.empty() ? "" : "; ") + l->options().server.to_string() + ": " + l->failure();
  return why;
}

}  // namespace ncast::peer
