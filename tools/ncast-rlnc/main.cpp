// ncast-rlnc: random linear network coding of files, end to end on one machine.
#include <boost/program_options/errors.hpp>
#include <exception>
#include <iostream>
#include <string_view>

#include "tools/ncast-rlnc/commands.hpp"

namespace ncast::rlnc_tool {

std::span<const Command> commands() {
  static constexpr Command kAll[] = {
      {"roundtrip", "code a file through lossy hops and recoding relays, decode it, check it byte for byte",
       run_roundtrip},
      {"coefficients", "print seeded coefficient vectors in the known-answer format of docs/coefficients.md",
       run_coefficients},
  };
  return kAll;
}

}  // namespace ncast::rlnc_tool

namespace {

void usage(std::ostream& out) {
  out << "usage: ncast-rlnc <command> [options]   (ncast-rlnc <command> --help for its options)\n\n"
         "Random linear network coding over GF(2^8): a file is cut into generations of n symbols, sent as\n"
         "seeded coded symbols, recoded by relays and decoded progressively.\n\ncommands:\n";
  for (const auto& c : ncast::rlnc_tool::commands()) out << "  " << c.name << "\t" << c.summary << "\n";
  out << "\nexit status: 0 done; 1 failed; 2 bad command line.\n";
}

}  // namespace

int main(int argc, char** argv) {
  using namespace ncast::rlnc_tool;
  if (argc < 2) {
    usage(std::cerr);
    return kExitUsage;
  }
  const std::string_view name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    usage(std::cout);
    return kExitOk;
  }
  for (const auto& c : commands()) {
    if (name != c.name) continue;
    try {
      return c.run(argc - 1, argv + 1);
    } catch (const UsageError& e) {
      std::cerr << "ncast-rlnc " << name << ": " << e.what() << "\n(ncast-rlnc " << name
                << " --help shows the options)\n";
      return kExitUsage;
    } catch (const boost::program_options::error& e) {
      std::cerr << "ncast-rlnc " << name << ": " << e.what() << "\n(ncast-rlnc " << name
                << " --help shows the options)\n";
      return kExitUsage;
    } catch (const std::exception& e) {
      std::cerr << "ncast-rlnc " << name << ": error: " << e.what() << "\n";
      return kExitFailure;
    }
  }
  std::cerr << "ncast-rlnc: unknown command '" << name << "'\n";
  usage(std::cerr);
  return kExitUsage;
}
