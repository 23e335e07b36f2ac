#include "server/metrics_http.hpp"

#include <boost/asio/error.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>

#include <initializer_list>
#include <memory>

namespace ncast::server {
namespace asio = boost::asio;
using asio::ip::tcp;

namespace {

constexpr std::size_t kMaxRequest = 8192;

// One request and its answer, within MetricsHttp::kDeadline; `closed` runs once when it ends.
struct Connection : std::enable_shared_from_this<Connection> {
  using Answer = std::function<std::string(const std::string& method, const std::string& target)>;

  Connection(asio::io_context& io, tcp::socket s, Answer answer, std::function<void()> closed)
      : socket(std::move(s)), timer(io), request(kMaxRequest), answer(std::move(answer)), closed(std::move(closed)) {}

  void start() {
    auto self = shared_from_this();
    timer.expires_after(MetricsHttp::kDeadline);
    timer.async_wait([self](const boost::system::error_code& ec) {
      if (!ec) self->finish();
    });
    asio::async_read_until(socket, request, "\r\n\r\n", [self](const boost::system::error_code& ec, std::size_t) {
      if (ec) return self->finish();
      std::istream in(&self->request);
      std::string method, target;
      in >> method >> target;
      self->response = self->answer(method, target);
      asio::async_write(self->socket, asio::buffer(self->response),
                        [self](const boost::system::error_code&, std::size_t) { self->finish(); });
    });
  }
  void finish() {
    if (done) return;
    done = true;
    boost::system::error_code ignore;
    timer.cancel();
    socket.shutdown(tcp::socket::shutdown_both, ignore);
    socket.close(ignore);
    closed();
  }

  tcp::socket socket;
  asio::steady_timer timer;
  asio::streambuf request;
  std::string response;
  Answer answer;
  std::function<void()> closed;
  bool done = false;
};

std::string http_response(const char* status, const std::string& body) {
  return std::string("HTTP/1.0 ") + status +
         "\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\nConnection: close\r\n\r\n" + body;
}

bool is_path(const std::string& target, const std::string& path) {
  return target == path || target.rfind(path + "?", 0) == 0;
}

// Under -fsanitize=vptr the runtime verifies a member call through an error_category& the first time it
// meets that category's vtable, and it needs a pipe (two free descriptors) to do so: out of descriptors,
// the check fails and reports a valid category as an "invalid vptr" in boost/system/error_code.hpp (seen
// with asio's misc category, first used by the eof of a client that closed while every descriptor was
// taken). One call per category the endpoint's errors use (system: accept's EMFILE, cancellation; misc:
// eof, a full request buffer), made while descriptors are free, caches the verdict for the process; the
// volatile pointer keeps the compiler from proving the dynamic type and leaving the check out. Other
// builds pay two error_code constructions.
void verify_error_categories_while_descriptors_are_free() {
  for (const boost::system::error_category* c :
       {&asio::error::get_system_category(), &asio::error::get_misc_category()}) {
    const boost::system::error_category* volatile category = c;
    static_cast<void>(boost::system::error_code(1, *category));
  }
}

}  // namespace

MetricsHttp::MetricsHttp(asio::io_context& io, const net::Address& address, std::function<std::string()> render,
                         std::function<Health()> health)
    : io_(io), acceptor_(io), pause_(io), render_(std::move(render)), health_(std::move(health)) {
  verify_error_categories_while_descriptors_are_free();
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
  if (accepting_ || open_ >= kMaxConnections || !acceptor_.is_open()) return;
  accepting_ = true;
  acceptor_.async_accept([this](const boost::system::error_code& ec, tcp::socket socket) {
    accepting_ = false;
    if (ec == asio::error::operation_aborted) return;
    if (ec) {
      // Out of descriptors (or memory): the connection stays queued, and trying again at once would
      // fail again at once. Wait for a connection or another part of the process to give one back.
      pause_.expires_after(kAcceptPause);
      pause_.async_wait([this](const boost::system::error_code& e) {
        if (!e) accept();
      });
      return;
    }
    ++open_;
    auto answer = [this](const std::string& method, const std::string& target) { return this->answer(method, target); };
    std::make_shared<Connection>(io_, std::move(socket), answer, [this] {
      --open_;
      accept();
    })->start();
    accept();
  });
}

std::string MetricsHttp::answer(const std::string& method, const std::string& target) const {
  if (method == "GET" && is_path(target, "/metrics")) return http_response("200 OK", render_());
  if (method == "GET" && is_path(target, "/healthz")) {
    const Health h = health_();
    return http_response(h.serving ? "200 OK" : "503 Service Unavailable", h.text + "\n");
  }
  return http_response("404 Not Found", "not found\n");
}

void MetricsHttp::close() {
  boost::system::error_code ignore;
  acceptor_.close(ignore);
  pause_.cancel();
}

}  // namespace ncast::server
