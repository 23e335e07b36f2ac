#include "cli/interrupt.hpp"

#include <csignal>

namespace ncast::cli {
namespace {

volatile std::sig_atomic_t arrived = 0;

extern "C" void on_signal(int sig) {
  if (arrived) {
    std::signal(sig, SIG_DFL);
    std::raise(sig);
  }
  arrived = sig;
}

}  // namespace

void catch_interrupts() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

int interrupt_signal() { return arrived; }

}  // namespace ncast::cli
