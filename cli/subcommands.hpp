#pragma once
// Programs made of subcommands (ncast-rs encode, ncast-rlnc roundtrip): the top-level usage, the
// dispatch to the command argv[1] names, and how what a command throws becomes a message and an exit
// status.
#include <iosfwd>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

namespace ncast::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;        // the work failed
inline constexpr int kExitUsage = 2;          // bad command line
inline constexpr int kExitInterrupted = 130;  // SIGINT or SIGTERM: 128 + SIGINT, as a shell reports Ctrl-C

// A bad command line: reported with a pointer to the command's --help, exit status 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A command that stopped short with an exit status of its own (an interrupt: 130), reported as
// "PROGRAM COMMAND: MESSAGE".
class Stopped : public std::runtime_error {
 public:
  Stopped(int status, const std::string& message) : std::runtime_error(message), status_(status) {}
  int status() const noexcept { return status_; }

 private:
  int status_;
};

struct Subcommand {
  std::string_view name;
  std::string_view summary;
  int (*run)(int argc, char** argv);  // argv[0] is the command's name
};

struct Program {
  std::string_view name;   // "ncast-rs"
  std::string_view about;  // what it does, between the usage line and the commands
  std::span<const Subcommand> commands;
  std::string_view exit_status;  // what each exit status means, after the commands
};

// The usage line, `about`, the commands with their summaries and `exit_status`.
std::string usage_text(const Program& program);

// Runs the command argv[1] names with the rest of argv and returns its exit status. No command,
// --help, -h or help print the usage (to `err` for no command, with status 2; to `out`, status 0),
// --version the version line (to `out`, status 0); an
// unknown one is reported with the usage, status 2. UsageError gives 2, Stopped its own status, any
// other exception 1, each with a message on `err`.
int run_subcommand(const Program& program, int argc, char** argv, std::ostream& out, std::ostream& err);

}  // namespace ncast::cli
