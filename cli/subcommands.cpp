#include "cli/subcommands.hpp"

#include "cli/command_line.hpp"

#include <exception>
#include <ostream>

namespace ncast::cli {
namespace {

// Runs one command, turning what it throws into a message on err and an exit status.
int run_reporting(const Program& program, const Subcommand& command, int argc, char** argv, std::ostream& err) {
  const auto& p = program.name;
  const auto& c = command.name;
  try {
    return command.run(argc, argv);
  } catch (const UsageError& e) {
    err << p << " " << c << ": " << e.what() << "\n(" << p << " " << c << " --help shows the options)\n";
    return kExitUsage;
  } catch (const Stopped& e) {
    err << p << " " << c << ": " << e.what() << "\n";
    return e.status();
  } catch (const std::exception& e) {
    err << p << " " << c << ": error: " << e.what() << "\n";
    return kExitFailure;
  }
}

}  // namespace

std::string usage_text(const Program& program) {
  std::string text = "usage: ";
  text.append(program.name).append(" <command> [options]   (").append(program.name);
  text.append(" <command> --help for its options)\n\n").append(program.about).append("\n\ncommands:\n");
  for (const auto& c : program.commands) text.append("  ").append(c.name).append("\t").append(c.summary) += '\n';
  text.append("\n").append(program.exit_status) += '\n';
  return text;
}

int run_subcommand(const Program& program, int argc, char** argv, std::ostream& out, std::ostream& err) {
  if (argc < 2) {
    err << usage_text(program);
    return kExitUsage;
  }
  const std::string_view name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    out << usage_text(program);
    return kExitOk;
  }
  if (name == "--version") {
    out << version_text(program.name);
    return kExitOk;
  }
  for (const auto& c : program.commands)
    if (name == c.name) return run_reporting(program, c, argc - 1, argv + 1, err);
  err << program.name << ": unknown command '" << name << "'\n" << usage_text(program);
  return kExitUsage;
}

}  // namespace ncast::cli
