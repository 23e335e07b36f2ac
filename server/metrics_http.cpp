#include "server/metrics_http.hpp"

#include <boost/asio/read_until.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>

#include <memory>

namespace ncast::server {
namespace asio = boost::asio;
using asio::ip::tcp;

namespace {

constexpr std::size_t kMaxRequest = 8192;

struct Connection : std::enable_shared_from_this<Connection> {
  Connection(asio::io_context& io, tcp::socket s, const std::function<std::string()>& render)
      : socket(std::move(s)), timer(io), request(kMaxRequest), render(render) {}

  void start() {
    auto self = shared_from_this();
    timer.expires_after(std::chrono::seconds(2));
    timer.async_wait([self](const boost::system::error_code& ec) {
      if (!ec) self->socket.close();
    });
    asio::async_read_until(socket, request, "\r\n\r\n", [self](const boost::system::error_code& ec, std::size_t) {
      if (ec) return self->finish();
      std::istream in(&self->request);
      std::string method, target;
      in >> method >> target;
      const bool ok = method == "GET" && (target == "/metrics" || target.rfind("/metrics?", 0) == 0);
      const std::string body = ok ? self->render() : "not found\n";
      self->response = std::string(ok ? "HTTP/1.0 200 OK\r\n" : "HTTP/1.0 404 Not Found\r\n") +
                       "Content-Type: text/plain; version=0.0.4\r\nContent-Length: " + std::to_string(body.size()) +
                       "\r\nConnection: close\r\n\r\n" + body;
      asio::async_write(self->socket, asio::buffer(self->response),
                        [self](const boost::system::error_code&, std::size_t) { self->finish(); });
    });
  }
  void finish() {
    boost::system::error_code ignore;
    timer.cancel();
    socket.shutdown(tcp::socket::shutdown_both, ignore);
    socket.close(ignore);
  }

  tcp::socket socket;
  asio::steady_timer timer;
  asio::streambuf request;
  std::string response;
  std::function<std::string()> render;
};

}  // namespace

MetricsHttp::MetricsHttp(asio::io_context& io, const net::Address& address, std::function<std::string()> render)
    : io_(io), acceptor_(io), render_(std::move(render)) {
  const auto ip = address.family == 4 ? asio::ip::address(asio::ip::address_v4(asio::ip::address_v4::bytes_type{
                                            address.ip[0], address.ip[1], address.ip[2], address.ip[3]}))
                                      : asio::ip::address(asio::ip::address_v6([&] {
                                          asio::ip::address_v6::bytes_type b{};
                                          std::copy(address.ip.begin(), address.ip.end(), b.begin());
                                          return b;
                                        }()));
  const tcp::endpoint ep(ip, address.port);
  acceptor_.open(ep.protocol());
  acceptor_.set_option(tcp::acceptor::reuse_address(true));
  boost::system::error_code bound;
  acceptor_.bind(ep, bound);
  if (bound) throw std::runtime_error("cannot bind TCP " + address.to_string() + " (--metrics): " + bound.message());
  acceptor_.listen();
  local_ = address;
  local_.port = acceptor_.local_endpoint().port();
  accept();
}

void MetricsHttp::accept() {
  acceptor_.async_accept([this](const boost::system::error_code& ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted) return;
    if (!ec) std::make_shared<Connection>(io_, std::move(socket), render_)->start();
    if (acceptor_.is_open()) accept();
  });
}

void MetricsHttp::close() {
  boost::system::error_code ignore;
  acceptor_.close(ignore);
}

}  // namespace ncast::server
