// The dispatch of programs made of subcommands: usage, help, unknown commands, and what a command's
// exceptions become.
#include "cli/subcommands.hpp"

#include "cli/command_line.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

namespace ncast::cli {
namespace {

// What the last command run was given.
std::vector<std::string> last_args;

int echo(int argc, char** argv) {
  last_args.assign(argv, argv + argc);
  return 7;
}
int bad_usage(int, char**) { throw UsageError("--size must be positive"); }
int stopped(int, char**) { throw Stopped(130, "interrupted; no output written"); }
int failing(int, char**) { throw std::runtime_error("disk full"); }

constexpr Subcommand kCommands[] = {
    {"echo", "returns 7", echo},
    {"usage", "rejects its command line", bad_usage},
    {"stop", "stops short", stopped},
    {"fail", "fails", failing},
};
const Program kProgram{.name = "prog",
                       .about = "Does things.",
                       .commands = kCommands,
                       .exit_status = "exit status: 0 done; 1 failed; 2 bad command line."};

struct Outcome {
  int code;
  std::string out, err;
};

Outcome run(std::vector<std::string> args) {
  args.insert(args.begin(), "prog");
  std::vector<char*> argv;
  argv.reserve(args.size());
  for (auto& a : args) argv.push_back(a.data());
  std::ostringstream out, err;
  const int code = run_subcommand(kProgram, static_cast<int>(args.size()), argv.data(), out, err);
  return {code, out.str(), err.str()};
}

TEST(Subcommands, UsageListsTheCommandsBetweenAboutAndExitStatus) {
  EXPECT_EQ(usage_text(kProgram),
            "usage: prog <command> [options]   (prog <command> --help for its options)\n\n"
            "Does things.\n\ncommands:\n"
            "  echo\treturns 7\n  usage\trejects its command line\n  stop\tstops short\n  fail\tfails\n\n"
            "exit status: 0 done; 1 failed; 2 bad command line.\n");
}

TEST(Subcommands, NoCommandPrintsTheUsageAsAnError) {
  const Outcome r = run({});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_EQ(r.err, usage_text(kProgram));
  EXPECT_TRUE(r.out.empty());
}

TEST(Subcommands, HelpPrintsTheUsage) {
  for (const char* help : {"--help", "-h", "help"}) {
    const Outcome r = run({help});
    EXPECT_EQ(r.code, kExitOk) << help;
    EXPECT_EQ(r.out, usage_text(kProgram)) << help;
    EXPECT_TRUE(r.err.empty()) << help;
  }
}

TEST(Subcommands, VersionPrintsTheProgramsVersionLine) {
  const Outcome r = run({"--version"});
  EXPECT_EQ(r.code, kExitOk);
  EXPECT_EQ(r.out, version_text("prog"));
  EXPECT_TRUE(r.err.empty());
}

TEST(Subcommands, UnknownCommandIsNamed) {
  const Outcome r = run({"frobnicate", "x"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_EQ(r.err, "prog: unknown command 'frobnicate'\n" + usage_text(kProgram));
}

TEST(Subcommands, TheCommandGetsTheRestOfArgvAndGivesTheStatus) {
  const Outcome r = run({"echo", "a", "--b"});
  EXPECT_EQ(r.code, 7);
  EXPECT_EQ(last_args, (std::vector<std::string>{"echo", "a", "--b"}));
  EXPECT_TRUE(r.err.empty());
}

TEST(Subcommands, ExceptionsBecomeMessagesAndStatuses) {
  Outcome r = run({"usage"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_EQ(r.err, "prog usage: --size must be positive\n(prog usage --help shows the options)\n");
  r = run({"stop"});
  EXPECT_EQ(r.code, 130);
  EXPECT_EQ(r.err, "prog stop: interrupted; no output written\n");
  r = run({"fail"});
  EXPECT_EQ(r.code, kExitFailure);
  EXPECT_EQ(r.err, "prog fail: error: disk full\n");
}

}  // namespace
}  // namespace ncast::cli
