#pragma once
// ncast-swarm's command line.
#include <string>

#include "cli/command_line.hpp"
#include "peer/swarm/swarm.hpp"

namespace ncast::swarm {

struct ParsedSwarmOptions {
  cli::Action action = cli::Action::run;
  std::string text;
  SwarmOptions options;
  bool json = false;        // the whole report (with every peer) as one JSON document on standard output
  std::string report_path;  // also write it here
  bool progress = false;    // a live line on standard error
};

// Throws std::invalid_argument with a message for the user.
ParsedSwarmOptions parse_swarm_options(int argc, const char* const* argv);

}  // namespace ncast::swarm
