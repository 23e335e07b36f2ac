// A file served on demand: sizes from the file's length alone, descriptors equal to the SHA-256 of the
// file's own segments (computed once, on first use), padded blocks through a cache far smaller than
// the file, and clear errors naming the file.
#include "server/file_segments.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "protocol/crypto.hpp"
#include "tools/temp_dir.hpp"

namespace ncast::server {
namespace {

std::vector<std::uint8_t> write_random(const std::filesystem::path& p, std::size_t n) {
  std::mt19937_64 rng(n);
  std::vector<std::uint8_t> v(n);
  for (auto& b : v) b = static_cast<std::uint8_t>(rng());
  std::ofstream(p, std::ios::binary).write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(n));
  return v;
}

TEST(FileSegments, DescriptorsAndBlocksMatchTheFile) {
  tools::TempDir dir;
  const auto data = write_random(dir / "movie", 10 * 512 + 100);
  SegmentCache cache(Backend::cpu, 2 * 512);  // two of eleven segments
  FileSegments file(dir / "movie", 512, 64, cache, 5ull << 32);
  ASSERT_EQ(file.count(), 11u);
  EXPECT_EQ(file.size_of(10), 100u);
  EXPECT_EQ(cache.stats().misses, 0u) << "opening reads nothing";
  for (std::uint32_t s = 0; s < 11; ++s) {
    const std::size_t size = file.size_of(s);
    EXPECT_EQ(file.descriptor(s).size, size);
    EXPECT_EQ(file.descriptor(s).hash, proto::sha256({data.data() + s * 512, size})) << "segment " << s;
  }
  EXPECT_EQ(cache.stats().misses, 0u) << "hashing takes no place in the cache";
  {
    std::fstream f(dir / "movie", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(3 * 512);
    f.put(static_cast<char>(data[3 * 512] ^ 1));
  }
  EXPECT_EQ(file.descriptor(3).hash, proto::sha256({data.data() + 3 * 512, 512})) << "a descriptor is hashed once";
  {
    std::fstream f(dir / "movie", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(3 * 512);
    f.put(static_cast<char>(data[3 * 512]));
  }
  for (std::uint32_t s : {10u, 0u, 7u, 10u}) {
    const SegmentBlock b = file.block(s);
    ASSERT_EQ(b->size(), s == 10 ? 128u : 512u);  // 100 octets padded to two symbols
    EXPECT_TRUE(std::equal(b->data(), b->data() + file.size_of(s), data.begin() + s * 512));
    EXPECT_TRUE(std::all_of(b->data() + file.size_of(s), b->data() + b->size(), [](auto x) { return x == 0; }));
  }
  EXPECT_LE(cache.stats().bytes, 2u * 512);
}

TEST(FileSegments, ErrorsNameTheFile) {
  tools::TempDir dir;
  SegmentCache cache(Backend::cpu, 1024);
  std::ofstream(dir / "empty");
  const auto message = [&](const std::filesystem::path& p) {
    try {
      FileSegments f(p, 512, 64, cache, 0);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(message(dir / "empty").find("empty"), std::string::npos);
  EXPECT_NE(message(dir / "missing").find((dir / "missing").string()), std::string::npos);
  write_random(dir / "shrinks", 4 * 512);
  FileSegments f(dir / "shrinks", 512, 64, cache, 0);
  std::filesystem::resize_file(dir / "shrinks", 512);
  try {
    f.block(3);
    FAIL() << "a short read must fail";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("shrinks"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ncast::server
