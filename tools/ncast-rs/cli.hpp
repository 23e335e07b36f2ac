#pragma once
// What the subcommands of ncast-rs share: exit codes, command-line parsing, the backend option.
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <boost/program_options.hpp>

#include "cli/subcommands.hpp"
#include "coding/backend.hpp"

namespace ncast::tools {

namespace po = boost::program_options;

// Exit codes (also in docs/rs-api.md): 0 done (verify: every shard intact); 1 failed, nothing
// written (I/O error, bad manifest, too few intact shards); 2 bad command line; 3 verify only: some
// shards damaged but the file is decodable; 130 interrupted.
enum ExitCode : int {
  kExitOk = cli::kExitOk,
  kExitFailure = cli::kExitFailure,
  kExitUsage = cli::kExitUsage,
  kExitDamaged = 3,
  kExitInterrupted = cli::kExitInterrupted
};

using cli::UsageError;

std::span<const cli::Subcommand> commands();

int run_encode(int argc, char** argv);
int run_decode(int argc, char** argv);
int run_verify(int argc, char** argv);
int run_repair(int argc, char** argv);

// Parses a subcommand's command line: options plus one positional argument named positional, which
// must be given. Prints usage and the options and returns nothing for --help; throws UsageError for
// anything wrong.
std::optional<po::variables_map> parse_command_line(int argc, char** argv, std::string_view usage,
                                                    const po::options_description& options, const char* positional);

// "auto" | "cpu" | "cuda"; UsageError otherwise.
Backend parse_backend_option(const std::string& name);

}  // namespace ncast::tools
