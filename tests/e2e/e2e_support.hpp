#pragma once
// Real processes on 127.0.0.1 for the end-to-end tests: spawn ncast-server and ncast-peer with their
// output in files, wait for JSON lines, scrape /metrics, and always clean up (a test that fails kills
// what it started). Every wait is bounded.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tools/temp_dir.hpp"

namespace ncast::e2e {

// Whether these tests (and so the programs they start, built alike) run under AddressSanitizer, whose
// shadow memory and quarantine make resident-memory figures meaningless.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif

using namespace std::chrono_literals;
using Json = nlohmann::json;

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

using tools::TempDir;

// A child process with stdin from /dev/null and stdout/stderr in files.
class Process {
 public:
  Process(const std::vector<std::string>& argv, const std::filesystem::path& out, const std::filesystem::path& err)
      : out_(out), err_(err) {
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    const pid_t parent = ::getpid();
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("cannot fork for " + argv[0]);
    if (pid_ == 0) {
      // The child dies with the test, even when the test is killed (ctest's timeout).
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(127);
      const int in = ::open("/dev/null", O_RDONLY);
      const int o = ::open(out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int e = ::open(err_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (in < 0 || o < 0 || e < 0) ::_exit(127);
      ::dup2(in, 0);
      ::dup2(o, 1);
      ::dup2(e, 2);
      ::execv(args[0], args.data());
      ::_exit(127);
    }
  }
  ~Process() {
    if (!exited_) {
      ::kill(pid_, SIGKILL);
      int status = 0;
      ::waitpid(pid_, &status, 0);
    }
  }
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  void signal(int sig) { ::kill(pid_, sig); }
  pid_t pid() const { return pid_; }
  // The exit code, or nullopt if still running after timeout (a signal death counts as 128+sig).
  std::optional<int> wait(std::chrono::milliseconds timeout) {
    const auto end = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      if (exited_) return code_;
      int status = 0;
      const pid_t r = ::waitpid(pid_, &status, WNOHANG);
      if (r == pid_) {
        exited_ = true;
        code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        return code_;
      }
      if (std::chrono::steady_clock::now() > end) return std::nullopt;
      std::this_thread::sleep_for(5ms);
    }
  }
  std::string out() const { return read_file(out_); }
  std::string err() const { return read_file(err_); }

  // The first JSON line of stdout (or stderr) with "event" == event, waiting at most timeout.
  std::optional<Json> wait_event(const std::string& event, std::chrono::milliseconds timeout, bool on_stderr = false) {
    const auto end = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      std::istringstream lines(on_stderr ? err() : out());
      for (std::string line; std::getline(lines, line);) {
        if (line.empty() || line[0] != '{') continue;
        auto j = Json::parse(line, nullptr, false);
        if (!j.is_discarded() && j.value("event", "") == event) return j;
      }
      if (std::chrono::steady_clock::now() > end || wait(0ms)) return std::nullopt;
      std::this_thread::sleep_for(10ms);
    }
  }

 private:
  pid_t pid_ = -1;
  bool exited_ = false;
  int code_ = -1;
  std::filesystem::path out_, err_;
};

// Hides every CUDA device from the processes started while it lives.
class NoCudaDevice {
 public:
  NoCudaDevice() {
    if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES")) saved_ = v;
    ::setenv("CUDA_VISIBLE_DEVICES", "", 1);
  }
  ~NoCudaDevice() {
    if (saved_) ::setenv("CUDA_VISIBLE_DEVICES", saved_->c_str(), 1);
    else ::unsetenv("CUDA_VISIBLE_DEVICES");
  }

 private:
  std::optional<std::string> saved_;
};

inline std::vector<std::uint8_t> random_bytes(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::uint8_t> v(n);
  for (auto& b : v) b = static_cast<std::uint8_t>(rng());
  return v;
}

inline void write_file(const std::filesystem::path& p, const std::vector<std::uint8_t>& data) {
  std::ofstream out(p, std::ios::binary);
  out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
}

inline std::vector<std::uint8_t> read_bytes(const std::filesystem::path& p) {
  const std::string s = read_file(p);
  return {s.begin(), s.end()};
}

struct HttpAnswer {
  int status = 0;
  std::string body;
};

// One GET of path: the status and body of a complete response (as long as its Content-Length says),
// or nothing (refused, cut short, or no answer within 2 s).
inline std::optional<HttpAnswer> http_get(std::uint16_t port, const std::string& path) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval tv{2, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return std::nullopt;
  }
  const std::string req = "GET " + path + " HTTP/1.0\r\n\r\n";
  (void)!::write(fd, req.data(), req.size());
  std::string resp;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) resp.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  const auto end = resp.find("\r\n\r\n"), length = resp.find("Content-Length: ");
  if (resp.rfind("HTTP/1.0 ", 0) != 0 || end == std::string::npos || length == std::string::npos || length > end)
    return std::nullopt;
  HttpAnswer answer{std::stoi(resp.substr(9, 3)), resp.substr(end + 4)};
  if (answer.body.size() != std::stoul(resp.substr(length + 16))) return std::nullopt;
  return answer;
}

// One GET /metrics: the body of a complete 200 response, or nothing.
inline std::optional<std::string> metrics_body(std::uint16_t port) {
  auto answer = http_get(port, "/metrics");
  if (!answer || answer->status != 200) return std::nullopt;
  return std::move(answer->body);
}

// GET /metrics from 127.0.0.1:port: series name (with labels) → value. A busy server may answer late
// or be cut short: asked again for up to 10 s, so that a test sees every series or none.
inline std::map<std::string, double> scrape(std::uint16_t port) {
  std::map<std::string, double> out;
  std::optional<std::string> body;
  for (const auto end = std::chrono::steady_clock::now() + 10s; !(body = metrics_body(port));) {
    if (std::chrono::steady_clock::now() > end) return out;
    std::this_thread::sleep_for(20ms);
  }
  std::istringstream lines(*body);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    const auto sp = line.rfind(' ');
    if (sp == std::string::npos) continue;
    out[line.substr(0, sp)] = std::stod(line.substr(sp + 1));
  }
  return out;
}

// Polls until pred(metrics) holds or timeout; returns the last scrape.
inline std::map<std::string, double> scrape_until(std::uint16_t port,
                                                  const std::function<bool(const std::map<std::string, double>&)>& pred,
                                                  std::chrono::milliseconds timeout) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto m = scrape(port);
    if (pred(m) || std::chrono::steady_clock::now() > end) return m;
    std::this_thread::sleep_for(20ms);
  }
}

// A UDP port that was free a moment ago.
inline std::uint16_t free_udp_port() {
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

// A plain UDP socket for tests that speak the protocol themselves, on 127.0.0.1 or another loopback
// address (127.0.0.0/8 is all loopback: other addresses stand for other hosts).
class TestSocket {
 public:
  explicit TestSocket(const char* ip = "127.0.0.1") {
    fd_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    ::inet_pton(AF_INET, ip, &a.sin_addr);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    int size = 4 << 20;
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
  }
  ~TestSocket() { ::close(fd_); }
  TestSocket(const TestSocket&) = delete;
  TestSocket& operator=(const TestSocket&) = delete;
  int fd() const { return fd_; }
  void send(std::uint16_t port, const std::vector<std::uint8_t>& d) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::sendto(fd_, d.data(), d.size(), 0, reinterpret_cast<sockaddr*>(&a), sizeof a);
  }
  // Next datagram within timeout.
  std::optional<std::vector<std::uint8_t>> receive(std::chrono::milliseconds timeout) {
    timeval tv{static_cast<long>(timeout.count() / 1000), static_cast<long>((timeout.count() % 1000) * 1000)};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    std::vector<std::uint8_t> buf(65536);
    const ssize_t n = ::recv(fd_, buf.data(), buf.size(), 0);
    if (n < 0) return std::nullopt;
    buf.resize(static_cast<std::size_t>(n));
    return buf;
  }

 private:
  int fd_ = -1;
};

#if defined(NCAST_SERVER_BIN) && defined(NCAST_PEER_BIN)
// ncast-server (or a program with its options and its "listening" line) and ncast-peer.
struct ServerProc {
  std::unique_ptr<Process> process;
  std::uint16_t port = 0, metrics = 0;
  Json listening;
};

inline ServerProc start_server(const TempDir& dir, const std::string& tag, std::vector<std::string> args,
                               const std::string& listen = "127.0.0.1:0",
                               const std::string& binary = NCAST_SERVER_BIN) {
  std::vector<std::string> argv{binary, "--listen", listen, "--metrics", "127.0.0.1:0"};
  argv.insert(argv.end(), args.begin(), args.end());
  ServerProc s;
  s.process = std::make_unique<Process>(argv, dir / (tag + ".stdout"), dir / (tag + ".stderr"));
  auto j = s.process->wait_event("listening", 15s);
  if (!j) throw std::runtime_error(tag + " did not start: " + s.process->err());
  s.listening = *j;
  s.port = (*j)["port"].get<std::uint16_t>();
  if ((*j)["metrics"].is_string()) {
    const std::string m = (*j)["metrics"].get<std::string>();
    s.metrics = static_cast<std::uint16_t>(std::stoi(m.substr(m.rfind(':') + 1)));
  }
  return s;
}

inline std::unique_ptr<Process> start_peer(const TempDir& dir, const std::string& tag, std::vector<std::string> args) {
  std::vector<std::string> argv{NCAST_PEER_BIN, "--progress", "off", "--timeout", "40"};
  argv.insert(argv.end(), args.begin(), args.end());
  return std::make_unique<Process>(argv, dir / (tag + ".stdout"), dir / (tag + ".stderr"));
}

struct PeerResult {
  int code = -1;
  Json report;
};

inline PeerResult finish(Process& p, std::chrono::milliseconds timeout = 45s) {
  PeerResult r;
  const auto code = p.wait(timeout);
  if (!code) throw std::runtime_error("a peer did not finish: " + p.err());
  r.code = *code;
  auto report = p.wait_event("report", 1s, true);
  if (!report) throw std::runtime_error("a peer wrote no report: " + p.err());
  r.report = *report;
  return r;
}
#endif

}  // namespace ncast::e2e
