#pragma once
// A minimal HTTP/1.0 endpoint for Prometheus: GET /metrics answers the rendered text, anything else
// 404. Requests are bounded in size and time; each connection serves one request.
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <functional>
#include <string>

#include "net/address.hpp"

namespace ncast::server {

class MetricsHttp {
 public:
  // Listens on address (port 0 picks one); render is called per request. Throws on bind failure.
  MetricsHttp(boost::asio::io_context& io, const net::Address& address, std::function<std::string()> render);
  net::Address local() const { return local_; }
  void close();

 private:
  void accept();

  boost::asio::io_context& io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::function<std::string()> render_;
  net::Address local_;
};

}  // namespace ncast::server
