#pragma once
// Ctrl-C and SIGTERM (noted by cli::catch_interrupts) end a run at the next slice instead of at once,
// so that its temporary files are removed on the way out and nothing half-written is left under a
// real name.
#include "cli/subcommands.hpp"
#include "tools/ncast-rs/cli.hpp"

namespace ncast::tools {

class Interrupted : public cli::Stopped {
 public:
  Interrupted() : cli::Stopped(kExitInterrupted, "interrupted; no output written") {}
};

// Throws Interrupted once a signal has arrived.
void check_interrupted();

}  // namespace ncast::tools
