// The ncast-rs manifest parser on any text a user's disk may hold. A manifest it accepts must be
// one a decode can rely on (a code GF(2^8) can have, plain file names, sizes that agree, a digest per
// shard), must survive its own round trip, and must describe a code the RS codec builds.
#include <set>
#include <string>
#include <string_view>

#include "coding/rs/codec.hpp"
#include "tests/fuzz/fuzz_target.hpp"
#include "tools/ncast-rs/manifest.hpp"
#include "tools/ncast-rs/sha256.hpp"

namespace {

using ncast::tools::Manifest;

bool plain_name(const std::string& s) {
  return !s.empty() && s != "." && s != ".." && s.find('/') == std::string::npos && s.find('\0') == std::string::npos;
}

}  // namespace

NCAST_FUZZ_TARGET(rs_manifest) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  Manifest m;
  try {
    m = Manifest::parse(text, "fuzz: ");
  } catch (const ncast::tools::ManifestError& e) {
    FUZZ_CHECK(std::string_view(e.what()).starts_with("fuzz: "));
    return 0;
  }
  // Checked here without the codec's own check_code_size.
  FUZZ_CHECK(m.k >= 1 && m.m >= 1 && m.k <= 256 && m.m <= 256 && m.k + m.m <= 256);
  FUZZ_CHECK(m.shards.size() == m.k + m.m);
  FUZZ_CHECK(m.shard_size == m.file_size / m.k + (m.file_size % m.k != 0));
  FUZZ_CHECK(plain_name(m.name) && ncast::tools::is_sha256_hex(m.file_sha256));
  // Repair writes under the shard names: they must be distinct and none may be the file or its manifest.
  std::set<std::string> names{m.name, Manifest::manifest_file(m.name)};
  for (const auto& s : m.shards) {
    FUZZ_CHECK(plain_name(s.file) && ncast::tools::is_sha256_hex(s.sha256));
    FUZZ_CHECK(names.insert(s.file).second);
  }

  const Manifest again = Manifest::parse(m.to_json(), "fuzz: ");
  FUZZ_CHECK(again.name == m.name && again.file_size == m.file_size && again.file_sha256 == m.file_sha256 &&
             again.k == m.k && again.m == m.m && again.matrix == m.matrix && again.shard_size == m.shard_size &&
             again.shards.size() == m.shards.size());
  for (std::size_t i = 0; i < m.shards.size(); ++i)
    FUZZ_CHECK(again.shards[i].file == m.shards[i].file && again.shards[i].sha256 == m.shards[i].sha256);

  const ncast::rs::Codec codec(m.k, m.m, {.matrix = m.matrix, .backend = ncast::Backend::cpu});
  FUZZ_CHECK(codec.total_shards() == m.shards.size());
  return 0;
}
