#pragma once
// The manifest ncast-rs writes beside the shards of a file: what the code is, and SHA-256 digests
// that tell intact shards from damaged ones and prove the decoded file right.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "coding/rs/generator.hpp"

namespace ncast::tools {

namespace fs = std::filesystem;

// A manifest that cannot be read or does not describe a consistent set of shards.
class ManifestError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ShardEntry {
  std::string file;  // a plain file name, in the manifest's directory
  std::string sha256;
};

struct Manifest {
  static constexpr int kVersion = 1;

  std::string name;  // the encoded file's name, without directories
  std::uint64_t file_size = 0;
  std::string file_sha256;
  std::size_t k = 0, m = 0;
  rs::MatrixKind matrix = rs::MatrixKind::cauchy;
  std::uint64_t shard_size = 0;    // ceil(file_size / k)
  std::vector<ShardEntry> shards;  // k + m, in shard order

  // Shard i of file `name`: "name.000" … (three digits, since k + m ≤ 256).
  static std::string shard_file(const std::string& name, std::size_t i);
  static std::string manifest_file(const std::string& name) { return name + ".manifest.json"; }
  static std::uint64_t shard_size_for(std::uint64_t file_size, std::size_t k) { return (file_size + k - 1) / k; }

  std::string to_json() const;
  // Reads and checks everything a decode relies on; ManifestError names the file and the problem.
  static Manifest load(const fs::path& path);
  // The same checks on a manifest's text; messages start with where.
  static Manifest parse(std::string_view text, const std::string& where);
};

}  // namespace ncast::tools
