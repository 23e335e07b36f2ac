// ncast-rs: Reed–Solomon erasure coding of files into shards, and back.
#include <iostream>

#include "cli/interrupt.hpp"
#include "cli/subcommands.hpp"
#include "tools/ncast-rs/cli.hpp"

int main(int argc, char** argv) {
  const ncast::cli::Program program{
      .name = "ncast-rs",
      .about =
          "Splits a file into K data and M parity shards (Reed-Solomon over GF(2^8), byte-compatible with\n"
          "ISA-L and klauspost/reedsolomon) so that any K of the K+M shards give the file back.",
      .commands = ncast::tools::commands(),
      .exit_status =
          "exit status: 0 done; 1 failed (nothing written); 2 bad command line; 3 verify found damage "
          "that\nrepair can fix; 130 interrupted.",
  };
  ncast::cli::catch_interrupts();
  return ncast::cli::run_subcommand(program, argc, argv, std::cout, std::cerr);
}
