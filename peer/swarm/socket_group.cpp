#include "peer/swarm/socket_group.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <system_error>

#include "net/udp_pktinfo.hpp"

namespace ncast::swarm {
namespace {

// Process-wide, so that the peers of every worker (and churn's newcomers) have distinct addresses; it
// wraps after 16 million peers, long gone by then.
net::Address next_loopback_host() {
  static std::atomic<std::uint32_t> next{0};
  return net::loopback_host(next.fetch_add(1, std::memory_order_relaxed) % net::kLoopbackHosts);
}

int open_socket(const net::Address& bind, std::size_t buffer) {
  const int fd = ::socket(bind.family == 4 ? AF_INET : AF_INET6, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "simulated peers: cannot open a UDP socket");
  // A shared socket holds the datagrams of all its peers: past net.core.rmem_max where allowed.
  const int size = static_cast<int>(std::min<std::size_t>(buffer, 1u << 30));
  if (::setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size) != 0)
    ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
  net::enable_udp_gro(fd);
  sockaddr_storage ss{};
  const socklen_t len = bind.to_sockaddr(ss);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0) {
    const int error = errno;
    ::close(fd);
    throw std::system_error(error, std::generic_category(), "simulated peers: cannot bind UDP " + bind.to_string());
  }
  return fd;
}

net::Address local_address(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len);
  return net::Address::from_sockaddr(reinterpret_cast<const sockaddr*>(&ss));
}

}  // namespace

bool shares_sockets(const std::vector<net::Address>& servers, std::size_t per_socket) {
  return per_socket > 1 && !servers.empty() &&
         std::all_of(servers.begin(), servers.end(), [](const auto& s) { return s.family == 4 && s.is_loopback(); });
}

SocketGroup::SocketGroup(const net::Address& server, bool shared, std::size_t capacity, std::size_t socket_buffer,
                         RxScratch& scratch, ReadySet& ready)
    : shared_(shared), capacity_(shared ? capacity : 1), scratch_(scratch), ready_(ready) {
  net::Address bind;
  bind.family = server.family;
  if (!shared && server.is_loopback()) bind.ip = server.ip;
  fd_ = open_socket(bind, socket_buffer * capacity_);
  if (shared && !net::enable_destination_info(fd_)) {
    const int error = errno;
    ::close(fd_);
    throw std::system_error(error, std::generic_category(), "simulated peers: IP_PKTINFO");
  }
  bound_ = local_address(fd_);
  try {
    ready_.add(fd_, *this);
  } catch (...) {
    ::close(fd_);
    throw;
  }
}

SocketGroup::~SocketGroup() {
  flush();
  ready_.remove(fd_);
  ::close(fd_);
}

net::Address SocketGroup::seat(GroupMember& member) {
  net::Address local = bound_;
  if (shared_) {
    local = next_loopback_host();
    local.port = bound_.port;
  }
  Seat s{};
  std::copy_n(local.ip.begin(), 4, s.ip.begin());
  s.member = &member;
  seats_.push_back(s);
  return local;
}

void SocketGroup::unseat(GroupMember& member) {
  const auto it = std::find_if(seats_.begin(), seats_.end(), [&](const Seat& s) { return s.member == &member; });
  if (it == seats_.end()) return;
  *it = seats_.back();
  seats_.pop_back();
}

void SocketGroup::send(const net::Address& local, const net::Address& to, std::span<const std::uint8_t> d,
                       std::uint64_t& refused) {
  if (!holding_) {
    refused += !send_now(local, to, d);
    return;
  }
  held_.push_back({local, to, held_bytes_.size(), d.size(), &refused});
  held_bytes_.insert(held_bytes_.end(), d.begin(), d.end());
  if (held_.size() == kHeld) flush();
}

bool SocketGroup::send_now(const net::Address& local, const net::Address& to, std::span<const std::uint8_t> d) {
  if (shared_) return net::send_from(fd_, local, to, d) >= 0;
  sockaddr_storage ss{};
  const socklen_t len = to.to_sockaddr(ss);
  return ::sendto(fd_, d.data(), d.size(), MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&ss), len) >= 0;
}

void SocketGroup::release() {
  flush();
  holding_ = false;
}

void SocketGroup::flush() {
  if (held_.empty()) return;
  // Only the n entries used are written: to_sockaddr and set_source clear what they fill.
  std::array<mmsghdr, kHeld> messages;
  std::array<iovec, kHeld> iovs;
  std::array<sockaddr_storage, kHeld> names;
  struct alignas(cmsghdr) Control {
    char bytes[CMSG_SPACE(sizeof(in_pktinfo))];
  };
  std::array<Control, kHeld> controls;
  const std::size_t n = held_.size();
  for (std::size_t i = 0; i < n; ++i) {
    const Held& h = held_[i];
    iovs[i] = {held_bytes_.data() + h.offset, h.size};
    messages[i] = {};
    msghdr& m = messages[i].msg_hdr;
    m.msg_name = &names[i];
    m.msg_namelen = h.to.to_sockaddr(names[i]);
    m.msg_iov = &iovs[i];
    m.msg_iovlen = 1;
    if (shared_) net::set_source(m, controls[i].bytes, sizeof controls[i].bytes, h.from);
  }
  for (std::size_t i = 0; i < n;) {
    const int sent = ::sendmmsg(fd_, messages.data() + i, static_cast<unsigned>(n - i), MSG_DONTWAIT);
    if (sent > 0) {
      i += static_cast<std::size_t>(sent);
    } else {
      ++*held_[i].refused;  // as a send of its own would have been: dropped, and the next tried
      ++i;
    }
  }
  held_.clear();
  held_bytes_.clear();
}

SocketGroup::Seat* SocketGroup::find(const net::Address& to) {
  if (!shared_) return seats_.empty() ? nullptr : &seats_.front();
  for (auto& s : seats_)
    if (std::memcmp(s.ip.data(), to.ip.data(), 4) == 0) return &s;
  return nullptr;
}

void SocketGroup::on_readable() {
  const TimePoint now = peer::Clock::now();
  const bool held = holding_;
  holding_ = true;
  touched_.clear();
  auto deliver = [&](std::span<std::uint8_t> d, const net::Address& from, const net::Address& to) {
    Seat* s = find(to);
    if (s == nullptr) {
      ++unclaimed_;
      return;
    }
    if (d.size() > scratch_.max_datagram) return;
    if (!s->touched) {
      s->touched = true;
      touched_.push_back(s->member);
    }
    s->member->on_datagram(d, from, now);
  };
  // A few batches per member at most, as when each peer had a socket: one busy socket does not starve
  // the others of its thread, and a group is drained as fast as its members were (with 4 batches a
  // round for a whole group, its queue grew to the 64 MB of its buffer and overflowed at 1,500 peers).
  const std::size_t batches = 4 * std::max<std::size_t>(seats_.size(), 1);
  for (std::size_t batch = 0; batch < batches; ++batch) {
    const auto r = shared_ ? net::receive_batch_to(fd_, scratch_.bytes.data(), RxScratch::kBatch, deliver)
                           : net::receive_batch(fd_, scratch_.bytes.data(), RxScratch::kBatch,
                                                [&](std::span<std::uint8_t> d, const net::Address& from) {
                                                  deliver(d, from, bound_);
                                                });
    if (r.messages < RxScratch::kBatch) break;
  }
  // after_input may end a member, which then leaves its seat: the seats are not walked after it.
  for (auto& s : seats_) s.touched = false;
  for (GroupMember* m : touched_) m->after_input(now);
  if (!held) release();
}

SocketGroups::SocketGroups(boost::asio::io_context& io, std::size_t per_socket, std::uint16_t max_datagram)
    : scratch_(max_datagram), ready_(io), per_socket_(std::max<std::size_t>(per_socket, 1)) {}

SocketGroups::Place SocketGroups::seat(GroupMember& member, const std::vector<net::Address>& servers,
                                       std::size_t socket_buffer) {
  const bool shared = shares_sockets(servers, per_socket_);
  SocketGroup* group = nullptr;
  // The newest group first: while a swarm ramps up, it is the one with room.
  if (shared)
    for (auto it = groups_.rbegin(); it != groups_.rend() && group == nullptr; ++it)
      if ((*it)->shared() && !(*it)->full()) group = it->get();
  if (group == nullptr) {
    groups_.push_back(
        std::make_unique<SocketGroup>(servers.front(), shared, per_socket_, socket_buffer, scratch_, ready_));
    group = groups_.back().get();
  }
  return {group, group->seat(member)};
}

void SocketGroups::leave(GroupMember& member, Place& place) {
  if (place.group != nullptr) place.group->unseat(member);
  place.group = nullptr;
}

void SocketGroups::sweep() {
  groups_.remove_if([this](const auto& g) {
    if (g->empty()) swept_unclaimed_ += g->unclaimed();
    return g->empty();
  });
}

void SocketGroups::hold() {
  for (const auto& g : groups_) g->hold();
}

void SocketGroups::release() {
  for (const auto& g : groups_) g->release();
}

std::uint64_t SocketGroups::unclaimed() const {
  std::uint64_t n = swept_unclaimed_;
  for (const auto& g : groups_) n += g->unclaimed();
  return n;
}

}  // namespace ncast::swarm
