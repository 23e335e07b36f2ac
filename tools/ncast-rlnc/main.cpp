// ncast-rlnc: random linear network coding of files, end to end on one machine.
#include <iostream>

#include "cli/subcommands.hpp"
#include "tools/ncast-rlnc/commands.hpp"

namespace ncast::rlnc_tool {

std::span<const cli::Subcommand> commands() {
  static constexpr cli::Subcommand kAll[] = {
      {"roundtrip", "code a file through lossy hops and recoding relays, decode it, check it byte for byte",
       run_roundtrip},
      {"coefficients", "print seeded coefficient vectors in the known-answer format of docs/coefficients.md",
       run_coefficients},
  };
  return kAll;
}

}  // namespace ncast::rlnc_tool

int main(int argc, char** argv) {
  const ncast::cli::Program program{
      .name = "ncast-rlnc",
      .about =
          "Random linear network coding over GF(2^8): a file is cut into generations of n symbols, sent as\n"
          "seeded coded symbols, recoded by relays and decoded progressively.",
      .commands = ncast::rlnc_tool::commands(),
      .exit_status = "exit status: 0 done; 1 failed; 2 bad command line.",
  };
  return ncast::cli::run_subcommand(program, argc, argv, std::cout, std::cerr);
}
