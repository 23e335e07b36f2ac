// A subcommand's own command line: options, one operand, --help before anything is required.
#include "cli/subcommand_line.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "cli/subcommands.hpp"

namespace ncast::cli {
namespace {
namespace po = boost::program_options;

struct Command {
  int size = 0;
  po::options_description options{"cmd options"};
  std::ostringstream out;
  Command() { options.add_options()("size,s", po::value(&size)->required(), "how big")("help,h", "show this help"); }
  std::optional<po::variables_map> parse(std::vector<const char*> args, Operand operand) {
    args.insert(args.begin(), "cmd");
    return parse_subcommand_line(static_cast<int>(args.size()), args.data(), "usage: cmd FILE", options, operand, out);
  }
};

std::string message_of(Command& c, std::vector<const char*> args, Operand operand) {
  try {
    c.parse(std::move(args), operand);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(SubcommandLine, OptionsAndOperand) {
  Command c;
  const auto vm = c.parse({"f.bin", "-s", "5"}, {.name = "file", .required = true});
  ASSERT_TRUE(vm);
  EXPECT_EQ((*vm)["file"].as<std::string>(), "f.bin");
  EXPECT_EQ(c.size, 5);
  EXPECT_TRUE(c.out.str().empty());
}

TEST(SubcommandLine, HelpComesBeforeWhatIsRequired) {
  Command c;
  EXPECT_FALSE(c.parse({"--help"}, {.name = "file", .required = true}));
  std::ostringstream options;
  options << c.options;
  EXPECT_EQ(c.out.str(), "usage: cmd FILE\n\n" + options.str() + "\n");
}

TEST(SubcommandLine, MissingOperandComesBeforeMissingOptions) {
  Command c;
  EXPECT_EQ(message_of(c, {}, {.name = "file", .required = true}), "missing file");
  EXPECT_EQ(message_of(c, {"f.bin"}, {.name = "file", .required = true}),
            "the option '--size' is required but missing");
}

TEST(SubcommandLine, AnOptionalOperandMayBeLeftOut) {
  Command c;
  const auto vm = c.parse({"-s", "1"}, {.name = "file"});
  ASSERT_TRUE(vm);
  EXPECT_EQ(vm->count("file"), 0u);
}

TEST(SubcommandLine, BoostErrorsBecomeUsageErrors) {
  Command c;
  EXPECT_EQ(message_of(c, {"f", "-s", "x"}, {.name = "file"}), "the argument ('x') for option '--size' is invalid");
  EXPECT_EQ(message_of(c, {"f", "--frob"}, {.name = "file"}), "unrecognised option '--frob'");
  EXPECT_EQ(message_of(c, {"f", "g", "-s", "1"}, {.name = "file"}),
            "too many positional options have been specified on the command line");
}

}  // namespace
}  // namespace ncast::cli
