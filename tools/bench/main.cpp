// ncast-bench: measured throughput of ncast's engines, each beside an anchor run in the same process.
#include <iostream>

#include "cli/subcommands.hpp"
#include "tools/bench/subcommands.hpp"

int main(int argc, char** argv) {
  const ncast::cli::Program program{
      .name = "ncast-bench",
      .about =
          "Measures ncast's coding engines and server, each beside an anchor (ISA-L, raw UDP, the seed-style\n"
          "GPU kernels) run in the same process, and reports both and their ratio.",
      .commands = ncast::bench::subcommands(),
      .exit_status = "exit status: 0 done; 1 failed; 2 bad command line.",
  };
  return ncast::cli::run_subcommand(program, argc, argv, std::cout, std::cerr);
}
