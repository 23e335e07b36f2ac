// ncast-bench: measured throughput of ncast's engines, each beside an anchor run in the same process.
#include <cstring>
#include <exception>
#include <iostream>
#include <string_view>

#include <boost/program_options/errors.hpp>

#include "tools/bench/subcommands.hpp"

namespace {

void usage(std::ostream& out) {
  out << "usage: ncast-bench <subcommand> [options]   (ncast-bench <subcommand> --help for its options)\n\n"
         "subcommands:\n";
  for (const auto& s : ncast::bench::subcommands()) out << "  " << s.name << "\t" << s.summary << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    usage(std::cerr);
    return 2;
  }
  const std::string_view name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    usage(std::cout);
    return 0;
  }
  for (const auto& s : ncast::bench::subcommands()) {
    if (name != s.name) continue;
    try {
      return s.run(argc - 1, argv + 1);
    } catch (const boost::program_options::error& e) {
      std::cerr << "ncast-bench " << name << ": " << e.what() << "\n";
      return 2;
    } catch (const std::exception& e) {
      std::cerr << "ncast-bench " << name << ": error: " << e.what() << "\n";
      return 1;
    }
  }
  std::cerr << "ncast-bench: unknown subcommand '" << name << "'\n";
  usage(std::cerr);
  return 2;
}
