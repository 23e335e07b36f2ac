// ncast-rs as its users run it: real processes on real files, checked against independent references
// (file bytes for data shards, ISA-L and a per-byte encoder for parity, OpenSSL for digests).
#include <fcntl.h>
#include <isa-l/erasure_code.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/coding/rs/rs_reference.hpp"
#include "tests/tools/ncast_rs_cli_fixture.hpp"

namespace {

namespace fs = std::filesystem;
using namespace ncast::testing::rs_cli;
using ncast::testing::Bytes;

// Encodes, deletes `lost` shards, decodes, and checks the output against the original bytes.
TEST_F(NcastRsCli, RoundTripsEmptyOneByteAndOddSizedFiles) {
  struct Case {
    std::size_t size, k, m;
    const char* matrix;
    std::vector<int> lost;
  };
  const Case cases[] = {
      {0, 4, 2, "cauchy", {0, 5}},
      {1, 3, 2, "vandermonde", {0, 1}},
      {1, 1, 1, "cauchy", {0}},
      {1000003, 10, 4, "cauchy", {0, 3, 9, 12}},
      {77777, 6, 3, "vandermonde", {2, 6, 8}},
  };
  int n = 0;
  for (const Case& c : cases) {
    const std::string name = "in" + std::to_string(n++) + ".bin";
    const Bytes original = random_file(name, c.size, 1000 + n);
    Result r = run({"encode", path(name).string(), "-k", std::to_string(c.k), "-m", std::to_string(c.m), "--matrix",
                    c.matrix, "-o", path("shards").string()});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("GB/s"), std::string::npos) << "no throughput line: " << r.out;
    EXPECT_EQ(r.err.find('\r'), std::string::npos) << "progress bar on a non-terminal";

    const auto m = nlohmann::json::parse(slurp(manifest(name)));
    EXPECT_EQ(m["k"], c.k);
    EXPECT_EQ(m["m"], c.m);
    EXPECT_EQ(m["matrix"], c.matrix);
    EXPECT_EQ(m["file_size"], c.size);
    EXPECT_EQ(m["shard_size"], (c.size + c.k - 1) / c.k);
    EXPECT_EQ(m["file_sha256"], sha256_hex(original));
    for (std::size_t i = 0; i < c.k + c.m; ++i)
      EXPECT_EQ(m["shards"][i]["sha256"], sha256_hex(read_bytes(shard(name, static_cast<int>(i))))) << "shard " << i;

    for (int i : c.lost) fs::remove(shard(name, i));
    const fs::path out = path(name + ".out");
    r = run({"decode", manifest(name), "-o", out.string()});
    ASSERT_EQ(r.code, 0) << c.size << " bytes: " << r.err;
    EXPECT_EQ(read_bytes(out), original) << c.size << " bytes, " << c.k << "+" << c.m;
    EXPECT_TRUE(temporaries(path("shards")).empty());
    EXPECT_TRUE(temporaries(dir_).empty());
  }
}

TEST_F(NcastRsCli, DataShardsAreTheFileAndParityMatchesIsalAndAnIndependentEncoder) {
  const std::size_t size = 3001;
  const Bytes file = random_file("f", size, 7);
  for (const char* matrix : {"cauchy", "vandermonde"}) {
    const std::size_t k = 4, m = 3, S = (size + k - 1) / k;
    fs::remove_all(path("shards"));
    ASSERT_EQ(
        run({"encode", path("f").string(), "-k", "4", "-m", "3", "--matrix", matrix, "-o", path("shards").string()})
            .code,
        0);
    std::vector<Bytes> data;
    for (std::size_t i = 0; i < k; ++i) {
      Bytes want(S, 0);
      for (std::size_t b = 0; b < S && i * S + b < size; ++b) want[b] = file[i * S + b];
      const Bytes got = read_bytes(shard("f", static_cast<int>(i)));
      ASSERT_EQ(got, want) << matrix << " data shard " << i;
      data.push_back(got);
    }
    std::vector<Bytes> want_parity;
    if (std::string(matrix) == "cauchy") {
      std::vector<unsigned char> a((k + m) * k), tables(32 * k * m);
      gf_gen_cauchy1_matrix(a.data(), static_cast<int>(k + m), static_cast<int>(k));
      ec_init_tables(static_cast<int>(k), static_cast<int>(m), a.data() + k * k, tables.data());
      want_parity.assign(m, Bytes(S));
      std::vector<unsigned char*> in, outp;
      for (auto& d : data) in.push_back(d.data());
      for (auto& p : want_parity) outp.push_back(p.data());
      ec_encode_data(static_cast<int>(S), static_cast<int>(k), static_cast<int>(m), tables.data(), in.data(),
                     outp.data());
    } else {
      want_parity = ncast::testing::slow_encode(ncast::testing::slow_vandermonde_parity(k, m), data);
    }
    for (std::size_t p = 0; p < m; ++p)
      EXPECT_EQ(read_bytes(shard("f", static_cast<int>(k + p))), want_parity[p]) << matrix << " parity " << p;
  }
}

TEST_F(NcastRsCli, CorruptAndTruncatedShardsCountAsMissingAndRepairRestoresThem) {
  const Bytes original = random_file("f", 500001, 8);
  ASSERT_EQ(run({"encode", path("f").string(), "-k", "5", "-m", "3", "-o", path("shards").string()}).code, 0);
  std::vector<Bytes> shards;
  for (int i = 0; i < 8; ++i) shards.push_back(read_bytes(shard("f", i)));

  Bytes flipped = shards[1];
  flipped[12345] ^= 0x40;
  write_bytes(shard("f", 1), flipped);                                        // same size, wrong bytes
  write_bytes(shard("f", 3), Bytes(shards[3].begin(), shards[3].end() - 1));  // truncated
  fs::remove(shard("f", 6));                                                  // missing

  Result r = run({"verify", manifest("f")});
  EXPECT_EQ(r.code, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("f.001  corrupt (checksum mismatch)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("f.003  corrupt (size"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("f.006  missing"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("f.000  ok"), std::string::npos) << r.out;

  r = run({"decode", manifest("f"), "-o", path("out").string()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(read_bytes(path("out")), original);
  EXPECT_NE(r.err.find("f.001 fails its checksum"), std::string::npos) << r.err;

  r = run({"repair", manifest("f")});
  ASSERT_EQ(r.code, 0) << r.err;
  for (int i = 0; i < 8; ++i) EXPECT_EQ(read_bytes(shard("f", i)), shards[i]) << "shard " << i;
  EXPECT_TRUE(temporaries(path("shards")).empty());
  EXPECT_EQ(run({"verify", manifest("f")}).code, 0);
  r = run({"repair", manifest("f")});
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("nothing to repair"), std::string::npos) << r.out;
}

TEST_F(NcastRsCli, FewerThanKIntactShardsFailWithoutCreatingTheOutput) {
  random_file("f", 40000, 9);
  ASSERT_EQ(run({"encode", path("f").string(), "-k", "4", "-m", "2", "-o", path("shards").string()}).code, 0);
  fs::remove(shard("f", 0));
  fs::remove(shard("f", 4));
  Bytes bad = read_bytes(shard("f", 2));
  bad[0] ^= 1;
  write_bytes(shard("f", 2), bad);  // found only by its checksum, during the decode

  Result r = run({"decode", manifest("f"), "-o", path("out").string()});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("cannot decode f: 3 of 6 shards intact, 4 needed"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(path("out")));
  EXPECT_TRUE(temporaries(dir_).empty());
  EXPECT_EQ(run({"verify", manifest("f")}).code, 1);
  r = run({"repair", manifest("f")});
  EXPECT_EQ(r.code, 1);
  EXPECT_FALSE(fs::exists(shard("f", 0)));
  EXPECT_TRUE(temporaries(path("shards")).empty());
}

TEST_F(NcastRsCli, WrongOrBrokenManifestsAreRefused) {
  random_file("f", 30000, 10);
  ASSERT_EQ(run({"encode", path("f").string(), "-k", "3", "-m", "2", "-o", path("shards").string()}).code, 0);
  const std::string good = slurp(manifest("f"));
  const auto edit = [&](const std::function<void(nlohmann::json&)>& change) {
    auto j = nlohmann::json::parse(good);
    change(j);
    std::ofstream(manifest("f"), std::ios::trunc) << j.dump();
  };
  const auto expect_refused = [&](const std::string& what, const std::string& message) {
    const Result r = run({"decode", manifest("f"), "-o", path("out").string()});
    EXPECT_EQ(r.code, 1) << what;
    EXPECT_NE(r.err.find(message), std::string::npos) << what << ": " << r.err;
    EXPECT_FALSE(fs::exists(path("out"))) << what;
  };

  // The manifest of another file with the same name and size: every shard fails its checksum.
  fs::create_directories(path("other"));
  random_file("other/f", 30000, 11);
  ASSERT_EQ(run({"encode", path("other/f").string(), "-k", "3", "-m", "2"}).code, 0);
  fs::copy_file(path("other/f.manifest.json"), manifest("f"), fs::copy_options::overwrite_existing);
  expect_refused("another file's manifest", "0 of 5 shards intact");

  std::ofstream(manifest("f"), std::ios::trunc) << "{ not json";
  expect_refused("garbage", "not a JSON document");
  std::ofstream(manifest("f"), std::ios::trunc) << "{\"hello\": 1}";
  expect_refused("other JSON", "not an ncast-rs manifest");
  edit([](auto& j) { j["shards"][1]["file"] = "../f"; });
  expect_refused("path outside", "not a plain file name");
  edit([](auto& j) { j["shard_size"] = 9999; });
  expect_refused("inconsistent size", "does not fit file_size");
  edit([](auto& j) { j["m"] = 254; });
  expect_refused("code too large", "k + m <= 256");
  edit([](auto& j) { j["shards"].erase(4); });
  expect_refused("shard missing from the list", "lists 4 shards for a 3+2 code");
  edit([](auto& j) { j["version"] = 2; });
  expect_refused("future version", "version 2 is not supported");
  edit([](auto& j) { j["matrix"] = "par1"; });
  expect_refused("unknown matrix", "unknown matrix");
  edit([](auto& j) { j.erase("file_sha256"); });
  expect_refused("missing digest", "missing or mistyped field");
  EXPECT_EQ(run({"decode", path("nope.json").string(), "-o", path("out").string()}).code, 1);
}

TEST_F(NcastRsCli, NeverOverwritesWithoutForce) {
  random_file("f", 20000, 12);
  ASSERT_EQ(run({"encode", path("f").string(), "-k", "2", "-m", "1", "-o", path("shards").string()}).code, 0);
  const Bytes first = read_bytes(shard("f", 2));
  random_file("f", 20000, 13);  // new contents, same name
  Result r = run({"encode", path("f").string(), "-k", "2", "-m", "1", "-o", path("shards").string()});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("exists (use --force"), std::string::npos) << r.err;
  EXPECT_EQ(read_bytes(shard("f", 2)), first);
  ASSERT_EQ(run({"encode", path("f").string(), "-k", "2", "-m", "1", "-o", path("shards").string(), "--force"}).code,
            0);
  EXPECT_NE(read_bytes(shard("f", 2)), first);

  write_bytes(path("out"), Bytes{1, 2, 3});
  r = run({"decode", manifest("f"), "-o", path("out").string()});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(read_bytes(path("out")), (Bytes{1, 2, 3}));
  ASSERT_EQ(run({"decode", manifest("f"), "-o", path("out").string(), "--force"}).code, 0);
  EXPECT_EQ(read_bytes(path("out")), read_bytes(path("f")));
  // Not even --force writes the output over one of its inputs.
  r = run({"decode", manifest("f"), "-o", shard("f", 0), "--force"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("over its input"), std::string::npos) << r.err;
  EXPECT_EQ(run({"verify", manifest("f")}).code, 0);
}

TEST_F(NcastRsCli, BadCommandLinesExit2AndEveryCommandHasHelp) {
  for (const char* cmd : {"encode", "decode", "verify", "repair"}) {
    const Result r = run({cmd, "--help"});
    EXPECT_EQ(r.code, 0) << cmd;
    EXPECT_NE(r.out.find(std::string("usage: ncast-rs ") + cmd), std::string::npos) << r.out;
  }
  EXPECT_EQ(run({"--help"}).code, 0);
  EXPECT_EQ(run({}).code, 2);
  EXPECT_EQ(run({"frobnicate"}).code, 2);
  random_file("f", 100, 14);
  EXPECT_EQ(run({"encode", path("f").string(), "-k", "0", "-m", "2"}).code, 2);
  EXPECT_EQ(run({"encode", path("f").string(), "-k", "200", "-m", "57"}).code, 2);
  EXPECT_EQ(run({"encode", path("f").string(), "-k", "2"}).code, 2);
  EXPECT_EQ(run({"encode", path("f").string(), "-k", "2", "-m", "1", "--matrix", "par1"}).code, 2);
  EXPECT_EQ(run({"encode", path("f").string(), "-k", "x", "-m", "1"}).code, 2);
  EXPECT_EQ(run({"encode", path("missing").string(), "-k", "2", "-m", "1"}).code, 1);
  EXPECT_EQ(run({"encode", dir_.string(), "-k", "2", "-m", "1"}).code, 1);  // a directory
  EXPECT_EQ(run({"decode", "m.json"}).code, 2);                             // no -o
#ifndef NCAST_TEST_HAVE_CUDA
  const Result r =
      run({"encode", path("f").string(), "-k", "2", "-m", "1", "--backend", "cuda", "-o", path("c").string()});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("cuda"), std::string::npos) << r.err;
  EXPECT_TRUE(visible(path("c")).empty());
#endif
}

TEST_F(NcastRsCli, ShardsGoBesideTheFileByDefault) {
  const Bytes original = random_file("g.dat", 999, 15);
  ASSERT_EQ(run({"encode", path("g.dat").string(), "-k", "3", "-m", "1", "-q"}).code, 0);
  EXPECT_TRUE(fs::exists(path("g.dat.003")));
  EXPECT_TRUE(fs::exists(path("g.dat.manifest.json")));
  const Result r = run({"decode", path("g.dat.manifest.json").string(), "-o", path("copy").string(), "-q"});
  ASSERT_EQ(r.code, 0);
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_EQ(read_bytes(path("copy")), original);
}

// A sparse file over 2 GiB (islands of data at shard boundaries and across 2^31, none overlapping), encoded
// and decoded with a data and a parity shard lost; then interrupted runs of the same encode.
TEST_F(NcastRsCli, MultiGiBSparseFileAndInterruptedEncodes) {
  const std::uint64_t size = (2ull << 30) + 12345;
  std::mt19937_64 rng(16);
  struct Island {
    std::uint64_t at;
    Bytes bytes;
  };
  std::vector<Island> islands;
  const std::vector<std::uint64_t> starts{0, (1ull << 30) - 3, size / 5 - 100, (2ull << 30) - 50000, size - 7};
  for (std::size_t i = 0; i < starts.size(); ++i) {
    const std::uint64_t end = i + 1 < starts.size() ? starts[i + 1] : size;
    islands.push_back({starts[i], ncast::testing::random_bytes(std::min<std::uint64_t>(70000, end - starts[i]), rng)});
  }
  {
    const int fd = ::open(path("big").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(size)), 0);
    for (const auto& i : islands)
      ASSERT_EQ(::pwrite(fd, i.bytes.data(), i.bytes.size(), static_cast<off_t>(i.at)),
                static_cast<ssize_t>(i.bytes.size()));
    ::close(fd);
  }
  Result r = run({"encode", path("big").string(), "-k", "5", "-m", "2", "-o", path("shards").string()});
  ASSERT_EQ(r.code, 0) << r.err;
  fs::remove(shard("big", 1));
  fs::remove(shard("big", 6));
  r = run({"decode", manifest("big"), "-o", path("big.out").string()});
  ASSERT_EQ(r.code, 0) << r.err;
  ASSERT_EQ(fs::file_size(path("big.out")), size);
  {
    // Every byte compared: the output's data extents are read and must hold the islands (zeros
    // elsewhere); its holes read as zeros by definition. Reading 2 GiB of holes would only make the
    // kernel zero pages, so they are skipped with SEEK_DATA / SEEK_HOLE.
    const int fd = ::open(path("big.out").c_str(), O_RDONLY);
    ASSERT_GE(fd, 0);
    std::vector<std::uint8_t> got(1 << 20), want(1 << 20);
    for (off_t pos = 0;;) {
      const off_t data = ::lseek(fd, pos, SEEK_DATA);
      if (data < 0) break;
      const off_t end = ::lseek(fd, data, SEEK_HOLE);
      for (off_t off = data; off < end; off += static_cast<off_t>(got.size())) {
        const std::size_t n = static_cast<std::size_t>(std::min<off_t>(end - off, static_cast<off_t>(got.size())));
        ASSERT_EQ(::pread(fd, got.data(), n, off), static_cast<ssize_t>(n));
        std::fill_n(want.begin(), n, 0);
        for (const auto& i : islands) {
          const std::uint64_t lo = std::max<std::uint64_t>(i.at, off),
                              hi = std::min<std::uint64_t>(i.at + i.bytes.size(), off + n);
          for (std::uint64_t b = lo; b < hi; ++b) want[b - off] = i.bytes[b - i.at];
        }
        ASSERT_TRUE(std::equal(got.begin(), got.begin() + static_cast<long>(n), want.begin()))
            << "differs in MiB at " << off;
      }
      pos = end;
    }
    // And the islands are there (a hole where one belongs would have passed the scan above).
    for (const auto& i : islands) {
      ASSERT_EQ(::pread(fd, got.data(), i.bytes.size(), static_cast<off_t>(i.at)),
                static_cast<ssize_t>(i.bytes.size()));
      ASSERT_TRUE(std::equal(i.bytes.begin(), i.bytes.end(), got.begin())) << "island at " << i.at;
    }
    ::close(fd);
  }
  fs::remove(path("big.out"));

  // Stopped with SIGINT: cleans up. Killed outright: may leave hidden temporaries, never real names.
  for (int sig : {SIGINT, SIGKILL}) {
    fs::remove_all(path("shards"));
    const pid_t pid = start({"encode", path("big").string(), "-k", "5", "-m", "2", "-o", path("shards").string()});
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    ::kill(pid, sig);
    r = wait(pid);
    if (r.code == 0) GTEST_SKIP() << "encode finished before the signal; machine too fast for this check";
    EXPECT_EQ(r.code, sig == SIGINT ? 130 : 128 + SIGKILL) << r.err;
    EXPECT_TRUE(visible(path("shards")).empty()) << "a killed encode left files under real names";
    if (sig == SIGINT) {
      EXPECT_TRUE(temporaries(path("shards")).empty());
    }
  }
}

}  // namespace
