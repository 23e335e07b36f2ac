// ncast-rs against what goes wrong on real disks, as real processes: shards swapped, duplicated,
// extended or replaced by links and directories; a full file system (a small tmpfs) and a file size
// limit; runs killed at any moment. Whatever happens, nothing that looks valid is left half-written
// and nothing intact is lost.
#include <sys/mount.h>
#include <sys/resource.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tests/tools/ncast_rs_cli_fixture.hpp"

namespace {

namespace fs = std::filesystem;
using namespace ncast::testing::rs_cli;
using ncast::testing::Bytes;

class NcastRsBadInput : public NcastRsCli {
 protected:
  // Encodes file `name` (size bytes) into k + m shards under shards/; returns the file's bytes and
  // fills shards_ with the shards as written.
  Bytes encode(const std::string& name, std::size_t size, int k, int m, std::uint64_t seed) {
    const Bytes file = random_file(name, size, seed);
    const Result r = run({"encode", path(name).string(), "-k", std::to_string(k), "-m", std::to_string(m), "-o",
                          path("shards").string(), "-q"});
    EXPECT_EQ(r.code, 0) << r.err;
    shards_.clear();
    for (int i = 0; i < k + m; ++i) shards_.push_back(read_bytes(shard(name, i)));
    return file;
  }
  std::vector<Bytes> shards_;
};

TEST_F(NcastRsBadInput, SwappedDuplicatedExtendedAndLinkedShardsAreFoundAndRepaired) {
  const Bytes file = encode("f", 9000001, 6, 5, 1);  // large enough to be hashed by several threads
  fs::rename(shard("f", 0), path("tmp"));            // 0 and 7 swapped
  fs::rename(shard("f", 7), shard("f", 0));
  fs::rename(path("tmp"), shard("f", 7));
  fs::copy_file(shard("f", 2), shard("f", 3), fs::copy_options::overwrite_existing);  // 2 duplicated onto 3
  Bytes longer = shards_[8];
  longer.push_back(0);
  write_bytes(shard("f", 8), longer);  // one byte too many
  fs::remove(shard("f", 5));
  fs::create_symlink("f.006", shard("f", 5));  // a link to another shard

  Result r = run({"verify", manifest("f")});
  EXPECT_EQ(r.code, 3) << r.out << r.err;
  const std::vector<std::string> lines{
      "f.000  corrupt (checksum mismatch)",
      "f.007  corrupt (checksum mismatch)",
      "f.003  corrupt (checksum mismatch)",
      "f.005  corrupt (a symbolic link to the same file as f.006)",
      "f.008  corrupt (size " + std::to_string(longer.size()) + ", expected " + std::to_string(shards_[8].size()) + ")",
      "f.001  ok",
      "f.006  ok",
      "6 of 11 shards intact"};
  for (const std::string& line : lines) EXPECT_NE(r.out.find(line), std::string::npos) << line << " not in\n" << r.out;

  r = run({"decode", manifest("f"), "-o", path("out").string(), "-q"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(read_bytes(path("out")), file);

  r = run({"repair", manifest("f"), "-q"});
  ASSERT_EQ(r.code, 0) << r.err;
  for (int i = 0; i < 11; ++i) EXPECT_EQ(read_bytes(shard("f", i)), shards_[i]) << "shard " << i;
  EXPECT_FALSE(fs::is_symlink(shard("f", 5))) << "the link was replaced, not written through";
  EXPECT_TRUE(temporaries(path("shards")).empty());
  EXPECT_EQ(run({"verify", manifest("f"), "-q"}).code, 0);
}

// Found by the rs_shards fuzz target: a link that reads right because it points at the file holding
// its shard's bytes (after a swap) must not survive a repair that replaces that file.
TEST_F(NcastRsBadInput, ALinkToAnotherShardsFileIsReplacedEvenWhenItReadsRight) {
  encode("f", 70001, 4, 3, 3);
  fs::rename(shard("f", 3), path("tmp"));  // 3 and 5 swapped
  fs::rename(shard("f", 5), shard("f", 3));
  fs::rename(path("tmp"), shard("f", 5));
  fs::remove(shard("f", 5));
  fs::create_symlink("f.003", shard("f", 5));  // reads as shard 5 through f.003's file
  fs::remove(shard("f", 0));
  ASSERT_EQ(read_bytes(shard("f", 5)), shards_[5]);

  Result r = run({"verify", manifest("f")});
  EXPECT_EQ(r.code, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("f.005  corrupt (a symbolic link to the same file as f.003)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("4 of 7 shards intact"), std::string::npos) << r.out;

  r = run({"repair", manifest("f"), "-q"});
  ASSERT_EQ(r.code, 0) << r.err;
  for (int i = 0; i < 7; ++i) EXPECT_EQ(read_bytes(shard("f", i)), shards_[i]) << "shard " << i;
  EXPECT_FALSE(fs::is_symlink(shard("f", 5)));
  EXPECT_EQ(run({"verify", manifest("f"), "-q"}).code, 0);
}

TEST_F(NcastRsBadInput, OneDamageTooManyFailsWithoutWritingAnything) {
  encode("f", 20000, 3, 2, 2);
  fs::copy_file(shard("f", 0), shard("f", 1), fs::copy_options::overwrite_existing);
  fs::copy_file(shard("f", 0), shard("f", 2), fs::copy_options::overwrite_existing);
  fs::copy_file(shard("f", 3), shard("f", 4), fs::copy_options::overwrite_existing);
  Result r = run({"decode", manifest("f"), "-o", path("out").string()});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("2 of 5 shards intact, 3 needed"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(path("out")));
  EXPECT_EQ(run({"verify", manifest("f"), "-q"}).code, 1);
  r = run({"repair", manifest("f")});
  EXPECT_EQ(r.code, 1);
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(read_bytes(shard("f", i)), i == 0 || i == 3 ? shards_[i] : shards_[i == 4 ? 3 : 0]);
  EXPECT_TRUE(temporaries(path("shards")).empty());
  EXPECT_TRUE(temporaries(dir_).empty());
}

TEST_F(NcastRsBadInput, ADirectoryWhereAShardBelongsStopsRepairBeforeAnyWork) {
  const Bytes file = encode("f", 50000, 3, 2, 7);
  fs::remove(shard("f", 1));
  fs::create_directory(shard("f", 1));
  write_bytes(fs::path(shard("f", 1)) / "keep", Bytes{1, 2, 3});  // someone's data
  fs::remove(shard("f", 4));
  Result r = run({"repair", manifest("f")});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("f.001 is a directory where a shard belongs"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(shard("f", 4))) << "repaired something before refusing";
  EXPECT_EQ(read_bytes(fs::path(shard("f", 1)) / "keep"), (Bytes{1, 2, 3}));
  EXPECT_TRUE(temporaries(path("shards")).empty());
  r = run({"decode", manifest("f"), "-o", path("out").string(), "-q"});  // it is only a missing shard
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(read_bytes(path("out")), file);
  fs::remove_all(shard("f", 1));
  ASSERT_EQ(run({"repair", manifest("f"), "-q"}).code, 0);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(read_bytes(shard("f", i)), shards_[i]) << "shard " << i;
}

// Repair writes rebuilt shards under the names the manifest gives: a manifest whose shard entries
// name the encoded file, the manifest, or one file twice would have it overwrite them.
TEST_F(NcastRsBadInput, ManifestsNamingOtherFilesOfTheSetAreRefused) {
  const Bytes file = encode("f", 30000, 3, 2, 8);
  write_bytes(path("shards") / "f", file);  // the original beside its shards, as encode without -o leaves it
  const std::string good = slurp(manifest("f"));
  const auto refused = [&](const std::string& what, const std::string& manifest_path, const std::string& message) {
    const std::string before = slurp(manifest_path);
    for (const char* command : {"verify", "decode", "repair"}) {
      std::vector<std::string> args{command, manifest_path};
      if (std::string(command) == "decode") args.insert(args.end(), {"-o", path("out").string()});
      const Result r = run(args);
      EXPECT_EQ(r.code, 1) << what << ", " << command;
      EXPECT_NE(r.err.find(message), std::string::npos) << what << ", " << command << ": " << r.err;
    }
    EXPECT_EQ(read_bytes(path("shards") / "f"), file) << what;
    EXPECT_EQ(slurp(manifest_path), before) << what;
    EXPECT_FALSE(fs::exists(path("out"))) << what;
    for (int i : {0, 1, 2, 4}) EXPECT_EQ(read_bytes(shard("f", i)), shards_[i]) << what;
  };
  const auto edited = [&](int shard_index, const std::string& name) {
    auto j = nlohmann::json::parse(good);
    j["shards"][shard_index]["file"] = name;
    return j.dump();
  };
  fs::remove(shard("f", 3));  // a repair would have something to write

  std::ofstream(manifest("f"), std::ios::trunc) << edited(3, "f");
  refused("the encoded file", manifest("f"), "shard 3 file \"f\" is the encoded file or its manifest");
  std::ofstream(manifest("f"), std::ios::trunc) << edited(3, "f.manifest.json");
  refused("the manifest", manifest("f"), "is the encoded file or its manifest");
  std::ofstream(manifest("f"), std::ios::trunc) << edited(3, "f.001");
  refused("a shard twice", manifest("f"), "shards 1 and 3 name the same file \"f.001\"");
  const std::string renamed = (path("shards") / "mine.json").string();
  std::ofstream(renamed, std::ios::trunc) << edited(3, "mine.json");
  refused("a renamed manifest", renamed, "shard 3 file \"mine.json\" is this manifest itself");
}

// Counts and sizes that JSON allows but no size is: negative (k = -1 once passed as a huge size_t whose
// sum with m wrapped below 256), fractional, or beyond 64 bits (undefined behaviour to convert).
TEST_F(NcastRsBadInput, SizesThatAreNotNonNegativeIntegersAreRefused) {
  encode("f", 10000, 2, 1, 9);
  const std::string good = slurp(manifest("f"));
  for (const auto& [key, value] :
       std::vector<std::pair<std::string, std::string>>{{"k", "-1"},
                                                        {"m", "1.5"},
                                                        {"file_size", "1e300"},
                                                        {"shard_size", "18446744073709551616"},
                                                        {"version", "-1"}}) {
    auto j = nlohmann::json::parse(good);
    j[key] = nlohmann::json::parse(value);
    std::ofstream(manifest("f"), std::ios::trunc) << j.dump();
    const Result r = run({"verify", manifest("f")});
    EXPECT_EQ(r.code, 1) << key << " = " << value;
    EXPECT_NE(r.err.find("\"" + key + "\" is "), std::string::npos) << key << " = " << value << ": " << r.err;
    EXPECT_NE(r.err.find("not a non-negative integer"), std::string::npos) << r.err;
  }
}

// A tmpfs of a few MiB: writes past its size fail with ENOSPC, as on a full disk.
class SmallFileSystem {
 public:
  SmallFileSystem(const fs::path& at, std::size_t bytes) : at_(at) {
    fs::create_directories(at);
    const std::string options = "size=" + std::to_string(bytes);
    if (::mount("tmpfs", at.c_str(), "tmpfs", 0, options.c_str()) == 0) mounted_ = true;
    else error_ = std::strerror(errno);
  }
  ~SmallFileSystem() {
    if (mounted_) ::umount2(at_.c_str(), MNT_DETACH);
  }
  bool mounted() const { return mounted_; }
  const std::string& error() const { return error_; }

 private:
  fs::path at_;
  bool mounted_ = false;
  std::string error_;
};

// Fills file's file system with file up to `leave` free bytes (as close as its blocks allow).
void fill(const fs::path& file, std::size_t leave) {
  const auto space = fs::space(file.parent_path());
  const std::size_t size = space.available > leave ? space.available - leave : 0;
  std::mt19937_64 rng(3);
  write_bytes(file, ncast::testing::random_bytes(size, rng));
}

TEST_F(NcastRsBadInput, FullDiskFailsCleanlyAndRepairFinishesOnceThereIsRoom) {
  const fs::path small = path("small");
  SmallFileSystem tmpfs(small, 6 << 20);
  if (!tmpfs.mounted())
    GTEST_SKIP() << "cannot mount a 6 MiB tmpfs here (needs root or CAP_SYS_ADMIN): " << tmpfs.error();

  // Encode: 4.5 MiB of shards do not fit in the 2 MiB left.
  const Bytes file = random_file("f", 3 << 20, 4);
  fill(small / "filler", 2 << 20);
  Result r = run({"encode", path("f").string(), "-k", "4", "-m", "2", "-o", (small / "shards").string()});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("No space left on device"), std::string::npos) << r.err;
  EXPECT_TRUE(visible(small / "shards").empty());
  EXPECT_TRUE(temporaries(small / "shards").empty());

  // Decode: 3 MiB do not fit either.
  ASSERT_EQ(run({"encode", path("f").string(), "-k", "4", "-m", "2", "-o", path("shards").string(), "-q"}).code, 0);
  r = run({"decode", manifest("f"), "-o", (small / "out").string()});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("No space left on device"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(small / "out"));
  EXPECT_TRUE(temporaries(small).empty());
  fs::remove(small / "filler");

  // Repair: the shards live on the small file system; one is lost and the space it held is taken.
  fs::copy(path("shards"), small / "shards");
  std::vector<Bytes> shards;
  for (int i = 0; i < 6; ++i) shards.push_back(read_bytes(small / "shards" / ("f.00" + std::to_string(i))));
  fs::remove(small / "shards" / "f.001");
  fill(small / "filler", 64 << 10);
  const std::string m = (small / "shards" / "f.manifest.json").string();
  r = run({"repair", m});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("No space left on device"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(small / "shards" / "f.001"));
  EXPECT_TRUE(temporaries(small / "shards").empty());
  for (int i : {0, 2, 3, 4, 5}) EXPECT_EQ(read_bytes(small / "shards" / ("f.00" + std::to_string(i))), shards[i]);
  fs::remove(small / "filler");
  r = run({"repair", m, "-q"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(read_bytes(small / "shards" / "f.001"), shards[1]);
  EXPECT_EQ(run({"verify", m, "-q"}).code, 0);
  r = run({"decode", m, "-o", path("back").string(), "-q"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(read_bytes(path("back")), file);
}

// Where no file system can be mounted, a file size limit makes every write fail the same way.
TEST_F(NcastRsBadInput, FileSizeLimitFailsLikeAFullDisk) {
  random_file("f", 3 << 20, 5);
  Result r = wait(start_with_file_limit(
      {"encode", path("f").string(), "-k", "2", "-m", "1", "-o", path("shards").string()}, 1 << 20));
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("File too large"), std::string::npos) << r.err;
  EXPECT_TRUE(visible(path("shards")).empty());
  EXPECT_TRUE(temporaries(path("shards")).empty());

  ASSERT_EQ(run({"encode", path("f").string(), "-k", "2", "-m", "1", "-o", path("shards").string(), "-q"}).code, 0);
  r = wait(start_with_file_limit({"decode", manifest("f"), "-o", path("out").string()}, 1 << 20));
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("File too large"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(path("out")));
  EXPECT_TRUE(temporaries(dir_).empty());

  const Bytes lost = read_bytes(shard("f", 2));
  fs::remove(shard("f", 2));
  r = wait(start_with_file_limit({"repair", manifest("f")}, 1 << 20));
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_FALSE(fs::exists(shard("f", 2)));
  EXPECT_TRUE(temporaries(path("shards")).empty());
  ASSERT_EQ(run({"repair", manifest("f"), "-q"}).code, 0);
  EXPECT_EQ(read_bytes(shard("f", 2)), lost);
}

// Encode, decode and repair stopped at several moments, politely (SIGTERM) and not (SIGKILL): a
// manifest present always vouches for a complete, valid set; an output present is always complete;
// a shard present is always either what it was or what it must be.
TEST_F(NcastRsBadInput, RunsStoppedAtAnyMomentLeaveNothingThatLooksValid) {
  // Large but sparse, so that it takes a while to encode and costs no time to make.
  const std::uint64_t size = 256ull << 20;
  {
    std::mt19937_64 rng(6);
    const Bytes island = ncast::testing::random_bytes(1 << 20, rng);
    std::ofstream out(path("f"), std::ios::binary);
    for (std::uint64_t at = 0; at < size; at += 32ull << 20) {
      out.seekp(static_cast<std::streamoff>(at));
      out.write(reinterpret_cast<const char*>(island.data()), static_cast<std::streamsize>(island.size()));
    }
    out.seekp(static_cast<std::streamoff>(size - 1));
    out.put('\1');
  }
  int interrupted = 0;
  const auto stop = [&](const std::vector<std::string>& args, int sig, int after_ms) {
    const pid_t pid = start(args);
    std::this_thread::sleep_for(std::chrono::milliseconds(after_ms));
    ::kill(pid, sig);
    const Result r = wait(pid);
    if (r.code != 0) {
      ++interrupted;
      // 128 + SIGTERM: the signal came before the handler was installed, before any file was touched.
      if (sig == SIGTERM) {
        EXPECT_TRUE(r.code == 130 || r.code == 128 + SIGTERM) << r.code << " " << r.err;
      } else {
        EXPECT_EQ(r.code, 128 + SIGKILL) << r.err;
      }
    }
    return r;
  };
  const std::vector<int> delays{20, 80, 200};
  for (int sig : {SIGTERM, SIGKILL})
    for (int after : delays) {
      SCOPED_TRACE("encode, signal " + std::to_string(sig) + " after " + std::to_string(after) + " ms");
      fs::remove_all(path("shards"));
      stop({"encode", path("f").string(), "-k", "4", "-m", "2", "-o", path("shards").string(), "-q"}, sig, after);
      if (fs::exists(manifest("f"))) {
        EXPECT_EQ(run({"verify", manifest("f"), "-q"}).code, 0) << "a manifest vouches for an incomplete set";
      } else {
        EXPECT_TRUE(sig == SIGKILL || visible(path("shards")).empty()) << "SIGTERM left shards under real names";
      }
      if (sig == SIGTERM) {
        EXPECT_TRUE(temporaries(path("shards")).empty());
      }
    }
  if (interrupted == 0) GTEST_SKIP() << "every encode finished before its signal; machine too fast for this check";

  fs::remove_all(path("shards"));
  ASSERT_EQ(run({"encode", path("f").string(), "-k", "4", "-m", "2", "-o", path("shards").string(), "-q"}).code, 0);
  const std::string s3 = sha256_hex(read_bytes(shard("f", 3)));
  for (int sig : {SIGTERM, SIGKILL})
    for (int after : delays) {
      SCOPED_TRACE("decode and repair, signal " + std::to_string(sig) + " after " + std::to_string(after) + " ms");
      fs::remove(path("out"));
      const Result d = stop({"decode", manifest("f"), "-o", path("out").string(), "-q"}, sig, after);
      EXPECT_EQ(fs::exists(path("out")), d.code == 0) << "an output appeared without a complete decode";
      if (sig == SIGTERM) {
        EXPECT_TRUE(temporaries(dir_).empty());
      }

      fs::remove(shard("f", 3));
      stop({"repair", manifest("f"), "-q"}, sig, after);
      if (fs::exists(shard("f", 3))) {
        EXPECT_EQ(sha256_hex(read_bytes(shard("f", 3))), s3) << "a half-rebuilt shard";
      }
      ASSERT_EQ(run({"repair", manifest("f"), "-q"}).code, 0);
    }
  EXPECT_EQ(run({"verify", manifest("f"), "-q"}).code, 0);
}

}  // namespace
