// ncast-peer: receives, decodes, verifies and writes an ncast stream; optionally relays it.
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>

#include "peer/decoder_factory.hpp"
#include "peer/options.hpp"
#include "peer/peer.hpp"

int main(int argc, char** argv) {
  ncast::peer::ParsedPeerOptions parsed;
  try {
    parsed = ncast::peer::parse_peer_options(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "ncast-peer: " << e.what() << "\n";
    return 2;
  }
  if (parsed.action != ncast::cli::Action::run) {
    std::cout << parsed.text;
    return 0;
  }
  // A player that quits closes the pipe: that is reported, not fatal.
  std::signal(SIGPIPE, SIG_IGN);
  try {
    const auto result =
        ncast::peer::run_peer(parsed.options, ncast::peer::make_decoder_factory(parsed.options.decoder));
    const std::string line = result.report.dump();
    std::fprintf(stderr, "%s\n", line.c_str());
    if (!parsed.options.report_path.empty()) {
      std::ofstream out(parsed.options.report_path);
      out << line << "\n";
      if (!out) {
        std::cerr << "ncast-peer: cannot write the report to " << parsed.options.report_path << ": "
                  << std::strerror(errno) << "\n";
        return 1;
      }
    }
    return result.exit_code;
  } catch (const std::exception& e) {
    std::cerr << "ncast-peer: " << e.what() << "\n";
    return 1;
  }
}
