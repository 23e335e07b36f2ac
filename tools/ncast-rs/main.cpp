// ncast-rs: Reed–Solomon erasure coding of files into shards, and back.
#include <exception>
#include <iostream>
#include <string_view>

#include "tools/ncast-rs/cli.hpp"
#include "tools/ncast-rs/interrupt.hpp"

namespace {

void usage(std::ostream& out) {
  out << "usage: ncast-rs <command> [options]   (ncast-rs <command> --help for its options)\n\n"
         "Splits a file into K data and M parity shards (Reed-Solomon over GF(2^8), byte-compatible with\n"
         "ISA-L and klauspost/reedsolomon) so that any K of the K+M shards give the file back.\n\ncommands:\n";
  for (const auto& c : ncast::tools::commands()) out << "  " << c.name << "\t" << c.summary << "\n";
  out << "\nexit status: 0 done; 1 failed (nothing written); 2 bad command line; 3 verify found damage that\n"
         "repair can fix; 130 interrupted.\n";
}

}  // namespace

int main(int argc, char** argv) {
  using namespace ncast::tools;
  if (argc < 2) {
    usage(std::cerr);
    return kExitUsage;
  }
  const std::string_view name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    usage(std::cout);
    return kExitOk;
  }
  catch_interrupts();
  for (const auto& c : commands()) {
    if (name != c.name) continue;
    try {
      return c.run(argc - 1, argv + 1);
    } catch (const UsageError& e) {
      std::cerr << "ncast-rs " << name << ": " << e.what() << "\n(ncast-rs " << name << " --help shows the options)\n";
      return kExitUsage;
    } catch (const Interrupted&) {
      std::cerr << "ncast-rs " << name << ": interrupted; no output written\n";
      return kExitInterrupted;
    } catch (const std::exception& e) {
      std::cerr << "ncast-rs " << name << ": error: " << e.what() << "\n";
      return kExitFailure;
    }
  }
  std::cerr << "ncast-rs: unknown command '" << name << "'\n";
  usage(std::cerr);
  return kExitUsage;
}
