#pragma once
// ncast-rs as its users run it: the fixture of the CLI tests, which start the real executable in a
// directory of their own and check its exit code, output and files.
#include <fcntl.h>
#include <openssl/sha.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tests/coding/rs/rs_reference.hpp"

extern char** environ;

namespace ncast::testing::rs_cli {

namespace fs = std::filesystem;

struct Result {
  int code = -1;  // exit status, or 128 + signal
  std::string out, err;
};

inline std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline Bytes read_bytes(const fs::path& p) {
  const std::string s = slurp(p);
  return Bytes(s.begin(), s.end());
}

inline void write_bytes(const fs::path& p, const Bytes& b) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

inline std::string sha256_hex(const Bytes& b) {
  unsigned char d[SHA256_DIGEST_LENGTH];
  SHA256(b.data(), b.size(), d);
  char hex[2 * SHA256_DIGEST_LENGTH + 1];
  for (int i = 0; i < SHA256_DIGEST_LENGTH; ++i) std::snprintf(hex + 2 * i, 3, "%02x", d[i]);
  return hex;
}

class NcastRsCli : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("ncast-rs-cli-" + std::to_string(::getpid()) + "-" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Starts ncast-rs with args; returns its pid. stdout and stderr go to files in the test directory.
  pid_t start(const std::vector<std::string>& args) {
    std::vector<std::string> all{NCAST_RS_EXE};
    all.insert(all.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : all) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, (dir_ / "stdout").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, 2, (dir_ / "stderr").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid = -1;
    const int rc = posix_spawn(&pid, NCAST_RS_EXE, &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    EXPECT_EQ(rc, 0) << "cannot start " << NCAST_RS_EXE;
    return pid;
  }
  // The same under a file size limit (RLIMIT_FSIZE, with SIGXFSZ ignored so that writes past it fail
  // with EFBIG as on a full disk instead of killing the process).
  pid_t start_with_file_limit(const std::vector<std::string>& args, rlim_t limit) {
    std::vector<std::string> all{NCAST_RS_EXE};
    all.insert(all.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : all) argv.push_back(a.data());
    argv.push_back(nullptr);
    const std::string out = (dir_ / "stdout").string(), err = (dir_ / "stderr").string();
    const pid_t pid = ::fork();
    if (pid == 0) {
      const int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const rlimit rl{limit, limit};
      if (o < 0 || e < 0 || ::dup2(o, 1) < 0 || ::dup2(e, 2) < 0 || ::setrlimit(RLIMIT_FSIZE, &rl) != 0) ::_exit(127);
      std::signal(SIGXFSZ, SIG_IGN);
      ::execve(NCAST_RS_EXE, argv.data(), environ);
      ::_exit(127);
    }
    EXPECT_GT(pid, 0) << "cannot fork";
    return pid;
  }
  Result wait(pid_t pid) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    Result r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = slurp(dir_ / "stdout");
    r.err = slurp(dir_ / "stderr");
    return r;
  }
  Result run(const std::vector<std::string>& args) { return wait(start(args)); }

  fs::path path(const std::string& name) const { return dir_ / name; }
  Bytes random_file(const std::string& name, std::size_t size, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    Bytes b = ncast::testing::random_bytes(size, rng);
    write_bytes(path(name), b);
    return b;
  }
  std::string shard(const std::string& name, int i) const {
    char s[16];
    std::snprintf(s, sizeof s, ".%03d", i);
    return (dir_ / "shards" / (name + s)).string();
  }
  std::string manifest(const std::string& name) const { return (dir_ / "shards" / (name + ".manifest.json")).string(); }
  // Files in the shard directory whose names are not hidden temporaries.
  std::vector<std::string> visible(const fs::path& d) const {
    std::vector<std::string> names;
    if (!fs::exists(d)) return names;
    for (const auto& e : fs::directory_iterator(d))
      if (e.path().filename().string()[0] != '.') names.push_back(e.path().filename().string());
    return names;
  }
  std::vector<std::string> temporaries(const fs::path& d) const {
    std::vector<std::string> names;
    if (!fs::exists(d)) return names;
    for (const auto& e : fs::directory_iterator(d))
      if (e.path().filename().string().find(".partial-") != std::string::npos) names.push_back(e.path().filename());
    return names;
  }

  fs::path dir_;
};

}  // namespace ncast::testing::rs_cli
