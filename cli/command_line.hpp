#pragma once
#include <boost/program_options.hpp>

#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace ncast::cli {

// What a program's command line asks for before any work: to run, or only to print help or version.
enum class Action { run, help, version };

// Parses argv against `options`; where `config_option` names an option given on the command line, the
// file it names too (`name = value` lines; the command line wins). Throws std::invalid_argument with
// Boost's message, or naming the unreadable file.
boost::program_options::variables_map parse_command_line(int argc, const char* const* argv,
                                                         const boost::program_options::options_description& options,
                                                         const char* config_option = nullptr);

// The --help text: what the program does and its usage line (`about`), then every option.
std::string help_text(std::string_view about, const boost::program_options::options_description& options);
// The --version line of `program`: "ncast-peer 0.1.0", with `detail` in parentheses when given.
std::string version_text(std::string_view program, std::string_view detail = {});

// A double as --help shows a default: the shortest text that reads back as the same value ("0.1",
// where Boost's stream would print 0.10000000000000001).
std::string shortest(double value);

// Throws std::invalid_argument("--NAME VALUE is out of range LO..HI") unless lo <= value <= hi.
template <typename T>
void in_range(const char* name, T value, T lo, T hi) {
  if (value < lo || value > hi) {
    std::ostringstream o;
    o << "--" << name << " " << value << " is out of range " << lo << ".." << hi;
    throw std::invalid_argument(o.str());
  }
}

}  // namespace ncast::cli
