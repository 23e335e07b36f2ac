// The command-line plumbing every program shares.
#include "cli/command_line.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace ncast::cli {
namespace {
namespace po = boost::program_options;

struct Program {
  int count = 0;
  std::string config;
  po::options_description options{"Options"};
  Program() {
    options.add_options()("count", po::value(&count)->default_value(1), "how many")("config", po::value(&config),
                                                                                    "read options from FILE");
  }
  po::variables_map parse(std::vector<const char*> args, const char* config_option = "config") {
    args.insert(args.begin(), "prog");
    return parse_command_line(static_cast<int>(args.size()), args.data(), options, config_option);
  }
};

TEST(CommandLine, ValuesAndDefaults) {
  Program p;
  p.parse({});
  EXPECT_EQ(p.count, 1);
  p.parse({"--count", "5"});
  EXPECT_EQ(p.count, 5);
}

TEST(CommandLine, BoostErrorsBecomeMessages) {
  Program p;
  try {
    p.parse({"--count", "many"});
    FAIL() << "a bad value was taken";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("count"), std::string::npos) << e.what();
  }
  EXPECT_THROW(p.parse({"--no-such-option"}), std::invalid_argument);
}

TEST(CommandLine, ConfigFileUnderTheCommandLine) {
  const auto path = std::filesystem::temp_directory_path() / ("ncast-cli-test-" + std::to_string(getpid()) + ".conf");
  std::ofstream(path) << "count = 7\n";
  Program p;
  p.parse({"--config", path.c_str()});
  EXPECT_EQ(p.count, 7);
  Program q;
  q.parse({"--config", path.c_str(), "--count", "3"});
  EXPECT_EQ(q.count, 3);
  Program r;
  r.parse({"--config", path.c_str()}, nullptr);  // no config option: the file is not read
  EXPECT_EQ(r.count, 1);
  std::filesystem::remove(path);
  try {
    Program s;
    s.parse({"--config", path.c_str()});
    FAIL() << "a missing config file was taken";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
  }
}

TEST(CommandLine, ShortestReadsBackAsTheSameDouble) {
  EXPECT_EQ(shortest(0.1), "0.1");
  EXPECT_EQ(shortest(0.08), "0.08");
  EXPECT_EQ(shortest(2.0), "2");
  for (const double v : {1.0 / 3, 1e-300, 12345.678, 0.30000000000000004})
    EXPECT_EQ(std::stod(shortest(v)), v) << shortest(v);
}

TEST(CommandLine, HelpVersionAndRanges) {
  Program p;
  const std::string help = help_text("prog: does things\n", p.options);
  EXPECT_EQ(help.rfind("prog: does things\n", 0), 0u);
  EXPECT_NE(help.find("--count"), std::string::npos);
  EXPECT_EQ(version_text("ncast-x"), std::string("ncast-x ") + NCAST_TEST_VERSION + "\n");
  EXPECT_EQ(version_text("ncast-x", "protocol version 1"),
            std::string("ncast-x ") + NCAST_TEST_VERSION + " (protocol version 1)\n");
  EXPECT_NO_THROW(in_range("n", 5, 1, 9));
  try {
    in_range("n", 10, 1, 9);
    FAIL() << "10 was taken as in 1..9";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "--n 10 is out of range 1..9");
  }
}

}  // namespace
}  // namespace ncast::cli
