#include "peer/server_links.hpp"

#include <algorithm>

namespace ncast::peer {
namespace {

// Link i's share of k, as the JOIN carries it: the remainder goes to the first.
std::uint16_t share_of(std::size_t i, std::size_t k) {
  return static_cast<std::uint16_t>(proto::kFullShare / k + (i < proto::kFullShare % k ? 1 : 0));
}

}  // namespace

ServerLinks::ServerLinks(const std::vector<net::Address>& servers, const LinkOptions& common,
                         StreamReceiver& receiver) {
  const std::size_t k = servers.size();
  for (std::size_t i = 0; i < k; ++i) {
    LinkOptions lo = common;
    lo.server = servers[i];
    lo.share = share_of(i, k);
    lo.systematic = i == 0;
    links_.push_back(std::make_unique<ServerLink>(lo, receiver));
  }
  live_.assign(k, true);
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

void ServerLinks::rebalance(TimePoint now, const std::function<ServerLink::Send(std::size_t)>& sender) {
  TimePoint newest = TimePoint::min();
  for (const auto& l : links_)
    if (l->state() == ServerLink::State::established) newest = std::max(newest, l->last_heard());
  if (newest == TimePoint::min()) return;
  std::vector<bool> live(links_.size());
  std::size_t count = 0;
  for (std::size_t i = 0; i < links_.size(); ++i) {
    const ServerLink& l = *links_[i];
    const bool joining = l.state() == ServerLink::State::hello || l.state() == ServerLink::State::join;
    // A first handshake, or one for a new share, is under way: judge once it is done.
    if (joining && !l.recovering()) return;
    live[i] = l.state() == ServerLink::State::established && newest - l.last_heard() < kDeadAfter;
    count += live[i] ? 1 : 0;
  }
  if (live == live_) return;
  live_ = live;
  ++failovers_;
  std::size_t rank = 0;
  for (std::size_t i = 0; i < links_.size(); ++i) {
    if (!live[i]) continue;
    links_[i]->reshare(share_of(rank, count), rank == 0, now, sender(i));
    ++rank;
  }
}

std::string ServerLinks::failures() const {
  std::string why;
  for (const auto& l : links_) why += (why.empty() ? "" : "; ") + l->options().server.to_string() + ": " + l->failure();
  return why;
}

}  // namespace ncast::peer
