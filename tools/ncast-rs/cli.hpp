#pragma once
// What the subcommands of ncast-rs share: exit codes, command-line parsing, the backend option.
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

#include <boost/program_options.hpp>

#include "coding/backend.hpp"

namespace ncast::tools {

namespace po = boost::program_options;

// Exit codes (also in docs/rs-api.md): 0 done (verify: every shard intact); 1 failed, nothing
// written (I/O error, bad manifest, too few intact shards); 2 bad command line; 3 verify only: some
// shards damaged but the file is decodable; 130 interrupted.
enum ExitCode : int { kExitOk = 0, kExitFailure = 1, kExitUsage = 2, kExitDamaged = 3, kExitInterrupted = 130 };

// A bad command line: exit 2 with a pointer to --help.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Command {
  std::string_view name;
  std::string_view summary;
  int (*run)(int argc, char** argv);  // argv[0] is the subcommand's name
};
std::span<const Command> commands();

int run_encode(int argc, char** argv);
int run_decode(int argc, char** argv);
int run_verify(int argc, char** argv);
int run_repair(int argc, char** argv);

// Parses a subcommand's command line into vm: options plus one positional argument named positional.
// Prints usage and the options and returns false for --help; throws UsageError for anything wrong.
bool parse_command_line(int argc, char** argv, const std::string& usage, const po::options_description& options,
                        const char* positional, po::variables_map& vm);

// "auto" | "cpu" | "cuda"; UsageError otherwise.
Backend parse_backend_option(const std::string& name);

}  // namespace ncast::tools
