#pragma once
// Attackers for the flood tests, speaking the protocol from their own sockets: a client that completes
// the handshake and then says nothing (or one ACK, or a BYE), and a flood of such clients from many
// ports, counting every octet each way. Addresses of 127.0.0.0/8 other than 127.0.0.1 stand for other
// hosts.
#include <poll.h>

#include <atomic>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "e2e_support.hpp"
#include "protocol/handshake.hpp"

namespace ncast::e2e {

class SilentClient {
 public:
  SilentClient(const char* ip, std::uint16_t port, std::string stream)
      : socket_(ip), port_(port), stream_(std::move(stream)) {}

  // A new handshake: its HELLO.
  void hello() {
    proto::Join wanted;
    wanted.stream = stream_;
    handshake_.emplace(wanted);
    accepted_.reset();
    send(handshake_->hello());
  }
  // Reads what has arrived, without waiting: a RETRY is answered with the JOIN, a MANIFEST kept.
  void drain() {
    std::vector<std::uint8_t> buf(65536);
    for (ssize_t n; (n = ::recv(socket_.fd(), buf.data(), buf.size(), MSG_DONTWAIT)) > 0;) {
      std::vector<std::uint8_t> d(buf.begin(), buf.begin() + n);
      received += d.size();
      if (manifest_seen_) session_bytes += d.size();
      on(d);
    }
  }
  // Waits up to timeout for a MANIFEST of the current handshake.
  bool wait_manifest(std::chrono::milliseconds timeout) {
    for (const auto end = std::chrono::steady_clock::now() + timeout; std::chrono::steady_clock::now() < end;) {
      pollfd p{socket_.fd(), POLLIN, 0};
      ::poll(&p, 1, 5);
      drain();
      if (accepted_) return true;
    }
    return false;
  }
  // The current session's first ACK (it proves the client receives), and BYE.
  void ack() {
    send(sealed(proto::PacketType::ack, [](proto::Writer& w) { proto::write_body(w, proto::AckBody{}); }));
  }
  void bye() {
    send(sealed(proto::PacketType::bye,
                [](proto::Writer& w) { proto::write_body(w, proto::ByeBody{proto::ByeReason::done}); }));
  }
  void send(const std::vector<std::uint8_t>& d) {
    socket_.send(port_, d);
    sent += d.size();
  }

  int fd() const { return socket_.fd(); }
  bool accepted() const { return accepted_.has_value(); }
  const std::vector<std::uint8_t>& join() const { return handshake_->join_datagram(); }
  std::size_t sent = 0, received = 0, join_bytes = 0, manifests = 0;
  std::size_t session_bytes = 0;  // received after the first MANIFEST
  bool ack_manifests = false;     // confirm each session at once (holds it for the idle timeout)

 private:
  void on(std::vector<std::uint8_t>& d) {
    const auto prefix = proto::parse_prefix(d);
    if (!prefix || !handshake_) return;
    if (prefix->type == proto::PacketType::retry) {
      auto retry = proto::decode_retry(d);
      if (!retry) return;
      if (auto join = handshake_->on_retry(*retry)) {
        join_bytes += join->size();
        send(*join);
      }
    } else if (prefix->type == proto::PacketType::manifest) {
      ++manifests;
      if (!manifest_seen_) session_bytes += d.size();
      manifest_seen_ = true;
      if (accepted_) return;
      if (auto a = handshake_->on_manifest(d, std::nullopt)) {
        accepted_ = *a;
        number_ = 0;
        if (ack_manifests) ack();
      }
    }
  }
  template <typename Body>
  std::vector<std::uint8_t> sealed(proto::PacketType type, const Body& body) {
    proto::Aead seal(accepted_->keys.suite, accepted_->keys.peer_key, accepted_->keys.peer_iv,
                     proto::Aead::Direction::seal);
    std::vector<std::uint8_t> out(1200);
    out.resize(proto::seal_packet(out, {type, accepted_->header.session, number_++}, seal, body));
    return out;
  }

  TestSocket socket_;
  std::uint16_t port_;
  std::string stream_;
  std::optional<proto::PeerHandshake> handshake_;
  std::optional<proto::PeerHandshake::Accepted> accepted_;
  bool manifest_seen_ = false;
  std::uint64_t number_ = 0;
};

// Clients on the given addresses starting handshakes at `rate` HELLOs per second in turn, on a thread of
// its own until stopped (or destroyed), answering every RETRY and never anything else (or one ACK
// each, with ack_manifests).
class HandshakeFlood {
 public:
  HandshakeFlood(const std::vector<std::string>& ips, std::uint16_t port, const std::string& stream, double rate,
                 bool ack_manifests = false) {
    for (const auto& ip : ips) {
      clients_.push_back(std::make_unique<SilentClient>(ip.c_str(), port, stream));
      clients_.back()->ack_manifests = ack_manifests;
    }
    thread_ = std::thread([this, rate] { run(rate); });
  }
  ~HandshakeFlood() { stop(); }
  void stop() {
    stopping_ = true;
    if (thread_.joinable()) thread_.join();
  }
  // After stop(): totals over the clients.
  std::size_t sent() const { return sum(&SilentClient::sent); }
  std::size_t received() const { return sum(&SilentClient::received); }
  std::size_t manifests() const { return sum(&SilentClient::manifests); }
  std::size_t hellos() const { return hellos_; }

 private:
  void run(double rate) {
    std::vector<pollfd> fds;
    for (const auto& c : clients_) fds.push_back({c->fd(), POLLIN, 0});
    const auto start = std::chrono::steady_clock::now();
    std::size_t next = 0;
    while (!stopping_) {
      const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      for (; static_cast<double>(hellos_) < elapsed * rate; ++hellos_) clients_[next++ % clients_.size()]->hello();
      ::poll(fds.data(), fds.size(), 1);
      for (std::size_t i = 0; i < fds.size(); ++i)
        if (fds[i].revents & POLLIN) clients_[i]->drain();
    }
    for (const auto& c : clients_) c->drain();
  }
  std::size_t sum(std::size_t SilentClient::*field) const {
    std::size_t total = 0;
    for (const auto& c : clients_) total += (*c).*field;
    return total;
  }

  std::vector<std::unique_ptr<SilentClient>> clients_;
  std::atomic<bool> stopping_{false};
  std::size_t hellos_ = 0;
  std::thread thread_;
};

}  // namespace ncast::e2e
