#include "cli/subcommand_line.hpp"

#include <ostream>
#include <string>

#include "cli/command_line.hpp"
#include "cli/subcommands.hpp"

namespace ncast::cli {
namespace po = boost::program_options;

std::optional<po::variables_map> parse_subcommand_line(int argc, const char* const* argv, std::string_view usage,
                                                       const po::options_description& options, Operand operand,
                                                       std::ostream& out) {
  po::options_description all;
  all.add(options);
  po::positional_options_description positional;
  if (operand.name != nullptr) {
    po::options_description hidden;
    hidden.add_options()(operand.name, po::value<std::string>());
    all.add(hidden);
    positional.add(operand.name, 1);
  }
  po::variables_map vm;
  try {
    po::command_line_parser parser(argc, argv);
    parser.options(all);
    if (operand.name != nullptr) parser.positional(positional);
    po::store(parser.run(), vm);
    if (vm.count("help")) {
      out << help_text(std::string(usage) + "\n\n", options) << "\n";
      return std::nullopt;
    }
    if (operand.required && !vm.count(operand.name)) throw UsageError(std::string("missing ") + operand.name);
    po::notify(vm);
  } catch (const po::error& e) {
    throw UsageError(e.what());
  }
  return vm;
}

}  // namespace ncast::cli
