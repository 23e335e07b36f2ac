#include "tools/bench/server_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <stdexcept>
#include <thread>

namespace ncast::bench {

std::string default_server_binary() {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "ncast-server";
  return (self.parent_path() / ".." / ".." / "server" / "ncast-server").lexically_normal().string();
}

ServerProcess::ServerProcess(const std::string& binary, const std::vector<std::string>& args, int cpu, int cpus,
                             std::chrono::milliseconds timeout) {
  if (::access(binary.c_str(), X_OK) != 0)
    throw std::runtime_error("no ncast-server at " + binary + " (build it, or give --server-bin)");
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
  std::vector<std::string> argv{binary};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> cargs;
  cargs.reserve(argv.size() + 1);
  for (auto& a : argv) cargs.push_back(a.data());
  cargs.push_back(nullptr);
  const pid_t parent = ::getpid();
  pid_ = ::fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    if (cpu >= 0) {
      cpu_set_t set;
      CPU_ZERO(&set);
      for (int c = cpu; c < cpu + cpus; ++c) CPU_SET(c, &set);
      ::sched_setaffinity(0, sizeof set, &set);
    }
    ::dup2(pipe_fds[1], STDOUT_FILENO);
    const int null = ::open("/dev/null", O_RDONLY);
    if (null >= 0) ::dup2(null, STDIN_FILENO);
    ::execv(cargs[0], cargs.data());
    ::_exit(127);
  }
  ::close(pipe_fds[1]);
  out_ = pipe_fds[0];
  // Read until the "listening" line.
  std::string text;
  const auto end = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const auto nl = text.find('\n');
    if (nl != std::string::npos) {
      auto j = nlohmann::json::parse(text.substr(0, nl), nullptr, false);
      text.erase(0, nl + 1);
      if (!j.is_discarded() && j.value("event", "") == "listening") {
        listening_ = j;
        break;
      }
      continue;
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now()).count();
    pollfd p{out_, POLLIN, 0};
    char buf[4096];
    ssize_t n = 0;
    if (left <= 0 || ::poll(&p, 1, static_cast<int>(left)) != 1 || (n = ::read(out_, buf, sizeof buf)) <= 0) {
      stop();
      throw std::runtime_error("ncast-server did not start (see its standard error above)");
    }
    text.append(buf, static_cast<std::size_t>(n));
  }
  address_ = net::Address::parse(listening_["address"].get<std::string>());
  if (listening_["metrics"].is_string()) metrics_ = net::Address::parse(listening_["metrics"].get<std::string>());
  // The pipe stays open (unread) until the end: run with --stats-interval 0, the server writes one more
  // line when it stops.
}

ServerProcess::~ServerProcess() { stop(); }

void ServerProcess::stop() {
  if (pid_ > 0) terminate(pid_);
  pid_ = -1;
  if (out_ >= 0) ::close(out_);
  out_ = -1;
}

void ServerProcess::terminate(pid_t pid) {
  ::kill(pid, SIGTERM);
  int status = 0;
  for (int i = 0; i < 500; ++i) {
    if (::waitpid(pid, &status, WNOHANG) == pid) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, &status, 0);
}

}  // namespace ncast::bench
