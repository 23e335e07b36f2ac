#pragma once
// Ctrl-C and SIGTERM end a run at the next slice instead of at once, so that its temporary files are
// removed on the way out and nothing half-written is left under a real name. A second signal ends
// the process at once.
#include "cli/subcommands.hpp"
#include "tools/ncast-rs/cli.hpp"

namespace ncast::tools {

class Interrupted : public cli::Stopped {
 public:
  Interrupted() : cli::Stopped(kExitInterrupted, "interrupted; no output written") {}
};

// Installs the SIGINT and SIGTERM handlers.
void catch_interrupts();
// Throws Interrupted once a signal has arrived.
void check_interrupted();

}  // namespace ncast::tools
