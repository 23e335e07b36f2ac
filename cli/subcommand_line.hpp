#pragma once
// A subcommand's own command line: its options, at most one operand (FILE, MANIFEST), and --help.
#include <boost/program_options.hpp>

#include <iosfwd>
#include <optional>
#include <string_view>

namespace ncast::cli {

// The one positional argument a command may take, stored as a string under `name`.
struct Operand {
  const char* name = nullptr;  // none: a positional argument is ignored, as Boost does without one
  bool required = false;       // UsageError("missing NAME") when it is not given
};

// Parses argv (argv[0] the command's name) against `options`, which include "help". For --help,
// prints `usage`, a blank line and the options to `out` and returns nothing; --help is looked at
// before a missing operand or required option is. Throws UsageError with Boost's message, or
// "missing NAME", for anything wrong.
std::optional<boost::program_options::variables_map> parse_subcommand_line(
    int argc, const char* const* argv, std::string_view usage,
    const boost::program_options::options_description& options, Operand operand, std::ostream& out);

}  // namespace ncast::cli
