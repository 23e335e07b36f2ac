#pragma once
// ncast-peer's command line.
#include <string>

#include "cli/command_line.hpp"
#include "peer/peer.hpp"

namespace ncast::peer {

struct ParsedPeerOptions {
  cli::Action action = cli::Action::run;
  std::string text;
  PeerOptions options;
};

// Throws std::invalid_argument with a message for the user.
ParsedPeerOptions parse_peer_options(int argc, const char* const* argv);

}  // namespace ncast::peer
