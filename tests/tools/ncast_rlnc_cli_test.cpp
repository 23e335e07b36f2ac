// ncast-rlnc as its users run it: a real process on real files, its exit status, output and messages.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

extern char** environ;

namespace {

namespace fs = std::filesystem;

struct Result {
  int code = -1;  // exit status, or 128 + signal
  std::string out, err;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class NcastRlncCli : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("ncast-rlnc-cli-" + std::to_string(::getpid()) + "-" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  Result run(const std::vector<std::string>& args) {
    std::vector<std::string> all{NCAST_RLNC_EXE};
    all.insert(all.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : all) argv.push_back(a.data());
    argv.push_back(nullptr);
    const fs::path out = dir_ / "stdout", err = dir_ / "stderr";
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid = -1;
    const int spawned = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    Result r;
    if (spawned != 0) {
      ADD_FAILURE() << "cannot start " << argv[0];
      return r;
    }
    int status = 0;
    waitpid(pid, &status, 0);
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
  }

  fs::path random_file(const std::string& name, std::size_t bytes, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::string data(bytes, '\0');
    for (auto& c : data) c = static_cast<char>(rng());
    const fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary).write(data.data(), static_cast<std::streamsize>(data.size()));
    return p;
  }

  fs::path dir_;
};

TEST_F(NcastRlncCli, Help) {
  const Result top = run({"--help"});
  EXPECT_EQ(top.code, 0);
  EXPECT_NE(top.out.find("roundtrip"), std::string::npos);
  const Result sub = run({"roundtrip", "--help"});
  EXPECT_EQ(sub.code, 0);
  for (const char* option : {"--n", "--symbol", "--loss", "--relays", "--seed"})
    EXPECT_NE(sub.out.find(option), std::string::npos) << option;
}

TEST_F(NcastRlncCli, RoundTripThroughLossyRelays) {
  // 300,001 bytes in generations of 32 symbols of 1000 bytes: 9 full ones (288,000 bytes) and a last
  // one of 12,001 bytes in 13 symbols, the last of them holding 1 byte.
  const fs::path file = random_file("input.bin", 300001, 1);
  const Result r = run({"roundtrip", file.string(), "--n", "32", "--symbol", "1000", "--loss", "0.3", "--relays", "2",
                        "--seed", "5", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j["identical"].get<bool>());
  EXPECT_EQ(j["bytes"], 300001);
  EXPECT_EQ(j["generations"], 10);
  EXPECT_EQ(j["needed"], 9 * 32 + 13);
  EXPECT_GE(j["received"].get<std::size_t>(), j["needed"].get<std::size_t>());
  EXPECT_EQ(j["received"].get<std::size_t>() - j["non_innovative"].get<std::size_t>(), j["needed"].get<std::size_t>());
  EXPECT_GT(j["relayed"].get<std::size_t>(), 0u);
  EXPECT_TRUE(r.err.empty()) << r.err;
}

TEST_F(NcastRlncCli, HumanSummary) {
  const fs::path file = random_file("small.bin", 5000, 2);
  const Result r =
      run({"roundtrip", file.string(), "--symbol", "100", "--loss", "0.5", "--no-systematic", "--density", "0.2"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("OK: the decoded file is identical"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("5000 bytes"), std::string::npos) << r.out;
}

TEST_F(NcastRlncCli, BadInputGetsAMessageAndNonZeroExit) {
  const fs::path file = random_file("ok.bin", 100, 3);
  const fs::path empty = dir_ / "empty.bin";
  std::ofstream(empty).close();
  struct Case {
    std::vector<std::string> args;
    int code;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"roundtrip", (dir_ / "missing.bin").string()}, 1, "no such file"},
      {{"roundtrip", dir_.string()}, 1, "not a regular file"},
      {{"roundtrip", empty.string()}, 1, "empty"},
      {{"roundtrip"}, 2, "no FILE"},
      {{"roundtrip", file.string(), "--loss", "1"}, 2, "--loss"},
      {{"roundtrip", file.string(), "--n", "0"}, 2, "--n"},
      {{"roundtrip", file.string(), "--symbol", "65537"}, 2, "--symbol"},
      {{"roundtrip", file.string(), "--relays", "65"}, 2, "--relays"},
      {{"roundtrip", file.string(), "--density", "0"}, 2, "--density"},
      {{"roundtrip", file.string(), "--n", "many"}, 2, "many"},
      {{"roundtrip", file.string(), "--frobnicate"}, 2, "frobnicate"},
      {{"transmogrify"}, 2, "unknown command"},
  };
  for (const auto& c : cases) {
    const Result r = run(c.args);
    EXPECT_EQ(r.code, c.code) << c.args[0] << " " << (c.args.size() > 1 ? c.args.back() : "");
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

TEST_F(NcastRlncCli, CoefficientsMatchTheKnownAnswerFile) {
  std::ifstream kat(std::string(NCAST_TEST_DATA_DIR) + "/rlnc_coefficients_kat.txt");
  std::string line;
  int checked = 0;
  while (std::getline(kat, line)) {
    if (line.rfind("coefficients ", 0) != 0) continue;
    std::istringstream s(line.substr(13));
    std::string server, stream, segment, index, n, threshold;
    s >> server >> stream >> segment >> index >> n >> threshold;
    if (threshold != "65536" && threshold != "32768") continue;  // densities the tool's fractions hit exactly
    const Result r = run({"coefficients", "--server", server, "--stream", stream, "--segment", segment, "--index",
                          index, "--n", n, "--density", threshold == "65536" ? "1" : "0.5"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out, line + "\n");
    ++checked;
  }
  EXPECT_GE(checked, 10);
}

}  // namespace
