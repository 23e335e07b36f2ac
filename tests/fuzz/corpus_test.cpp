// Replays the committed corpus of every fuzz target in the normal suite: the seeds, and each input
// that once made a target fail (kept under the name the fix gave it). A target that aborts fails the
// run; the sanitized CI pass replays them under AddressSanitizer and UBSan as well.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_target.hpp"

namespace ncast::fuzz {

std::map<std::string, TargetFn>& registry() {
  static std::map<std::string, TargetFn> targets;
  return targets;
}

bool register_target(const char* name, TargetFn fn) {
  registry()[name] = fn;
  return true;
}

namespace {

namespace fs = std::filesystem;

class FuzzCorpus : public ::testing::TestWithParam<std::string> {};

TEST_P(FuzzCorpus, EveryEntryPasses) {
  const auto it = registry().find(GetParam());
  ASSERT_NE(it, registry().end()) << "no fuzz target " << GetParam();
  const fs::path dir = fs::path(NCAST_FUZZ_CORPUS_DIR) / GetParam();
  ASSERT_TRUE(fs::is_directory(dir)) << dir;
  std::vector<fs::path> entries;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file()) entries.push_back(e.path());
  ASSERT_FALSE(entries.empty()) << "empty corpus " << dir;
  std::sort(entries.begin(), entries.end());
  for (const auto& path : entries) {
    SCOPED_TRACE(path.string());
    std::ifstream in(path, std::ios::binary);
    const std::vector<std::uint8_t> bytes(std::istreambuf_iterator<char>(in), {});
    EXPECT_EQ(it->second(bytes.data(), bytes.size()), 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Targets, FuzzCorpus,
                         ::testing::Values("packets", "rlnc_decoder", "peer_receiver", "rs_manifest", "rs_shards",
                                           "signed_table"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace ncast::fuzz
