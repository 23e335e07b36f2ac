#pragma once
// A minimal HTTP/1.0 endpoint for Prometheus and health checks: GET /metrics answers the rendered
// text, GET /healthz whether the server serves (200 or 503, one line), anything else 404. It never lets
// clients tie it up: each connection serves one request within a deadline, at most kMaxConnections are
// open at once (more wait in the listen queue), and when the process runs out of descriptors accepting
// pauses instead of being retried at once (which would spin a core).
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>

#include "net/address.hpp"

namespace ncast::server {

class MetricsHttp {
 public:
  static constexpr std::size_t kMaxConnections = 64;
  static constexpr std::chrono::milliseconds kDeadline{2000};    // to read the request and write the answer
  static constexpr std::chrono::milliseconds kAcceptPause{100};  // after accept failed (EMFILE, ENFILE, ...)

  struct Health {
    bool serving = true;  // false: 503
    std::string text;     // one line
  };

  // Listens on address (port 0 picks one); render and health are called per request. Throws on bind
  // failure.
  MetricsHttp(boost::asio::io_context& io, const net::Address& address, std::function<std::string()> render,
              std::function<Health()> health);
  net::Address local() const { return local_; }
  std::size_t open_connections() const { return open_; }
  void close();

 private:
  void accept();
  // The whole response to a request line's method and target.
  std::string answer(const std::string& method, const std::string& target) const;

  boost::asio::io_context& io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer pause_;
  std::function<std::string()> render_;
  std::function<Health()> health_;
  net::Address local_;
  std::size_t open_ = 0;
  bool accepting_ = false;
};

}  // namespace ncast::server
