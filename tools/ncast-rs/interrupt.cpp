#include "tools/ncast-rs/interrupt.hpp"

#include <csignal>

namespace ncast::tools {
namespace {

volatile std::sig_atomic_t interrupted = 0;

// A second signal ends the process at once, as the user then means it.
extern "C" void on_signal(int sig) {
  if (interrupted) {
    std::signal(sig, SIG_DFL);
    std::raise(sig);
  }
  interrupted = 1;
}

}  // namespace

void catch_interrupts() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

void check_interrupted() {
  if (interrupted) throw Interrupted();
}

}  // namespace ncast::tools
