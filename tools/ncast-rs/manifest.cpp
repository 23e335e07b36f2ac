#include "tools/ncast-rs/manifest.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "tools/ncast-rs/sha256.hpp"

namespace ncast::tools {
namespace {

using nlohmann::ordered_json;

constexpr const char* kFormat = "ncast-rs";
// Field and generator conventions, recorded so that other tools can read the shards.
constexpr const char* kField = "GF(2^8), polynomial 0x11d";

bool plain_file_name(const std::string& s) {
  return !s.empty() && s != "." && s != ".." && s.find('/') == std::string::npos && s.find('\0') == std::string::npos;
}

// Shard entry i of m: a plain name of its own and a digest; messages start with where.
void check_shard_entry(const Manifest& m, std::size_t i, const std::string& where) {
  const std::string& file = m.shards[i].file;
  std::string entry = where;
  entry.append("shard ").append(std::to_string(i));
  // Shard names come from a file someone may have edited: never let one point outside the directory.
  if (!plain_file_name(file))
    throw ManifestError(entry.append(" file \"").append(file).append("\" is not a plain file name"));
  if (!is_sha256_hex(m.shards[i].sha256)) throw ManifestError(entry.append(" sha256 is not a SHA-256 digest"));
  // Nor at another file of the set: repair writes rebuilt shards under these names.
  if (file == m.name || file == Manifest::manifest_file(m.name))
    throw ManifestError(
        entry.append(" file \"").append(file).append("\" is the encoded file or its manifest, not a shard"));
  for (std::size_t j = 0; j < i; ++j)
    if (m.shards[j].file == file) {
      std::string message = where;
      message.append("shards ").append(std::to_string(j)).append(" and ").append(std::to_string(i));
      throw ManifestError(message.append(" name the same file \"").append(file).append("\""));
    }
}

}  // namespace

std::string Manifest::shard_file(const std::string& name, std::size_t i) {
  char suffix[8];
  std::snprintf(suffix, sizeof suffix, ".%03zu", i);
  return name + suffix;
}

std::string Manifest::to_json() const {
  ordered_json j;
  j["format"] = kFormat;
  j["version"] = kVersion;
  j["file"] = name;
  j["file_size"] = file_size;
  j["file_sha256"] = file_sha256;
  j["k"] = k;
  j["m"] = m;
  j["matrix"] = std::string(rs::to_string(matrix));
  j["field"] = kField;
  j["shard_size"] = shard_size;
  j["shards"] = ordered_json::array();
  for (std::size_t i = 0; i < shards.size(); ++i)
    j["shards"].push_back({{"index", i}, {"file", shards[i].file}, {"sha256", shards[i].sha256}});
  return j.dump(2) + "\n";
}

Manifest Manifest::load(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ManifestError("cannot read manifest " + path.string() + ": " + std::strerror(errno));
  std::stringstream text;
  text << in.rdbuf();
  Manifest m = parse(text.str(), path.string() + ": ");
  for (std::size_t i = 0; i < m.shards.size(); ++i)
    if (m.shards[i].file == path.filename())
      throw ManifestError(path.string() + ": shard " + std::to_string(i) + " file \"" + m.shards[i].file +
                          "\" is this manifest itself");
  return m;
}

Manifest Manifest::parse(std::string_view text, const std::string& where) {
  ordered_json j;
  try {
    j = ordered_json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw ManifestError(where + "not a JSON document (" + e.what() + ")");
  }
  if (!j.is_object() || !j.contains("format") || j["format"] != kFormat)
    throw ManifestError(where + "not an ncast-rs manifest (no \"format\": \"ncast-rs\")");

  // Counts and sizes are non-negative integers: JSON also allows -1, 1.5 and 1e300, which no
  // conversion to an unsigned type survives.
  const auto count = [&](const ordered_json& obj, const char* key) {
    const ordered_json& v = obj.at(key);
    if (!v.is_number_unsigned())
      throw ManifestError(where + "\"" + key + "\" is " + v.dump() + ", not a non-negative integer");
    return v.get<std::uint64_t>();
  };
  Manifest m;
  try {
    const std::uint64_t version = count(j, "version");
    if (version != kVersion)
      throw ManifestError(where + "manifest version " + std::to_string(version) +
                          " is not supported (this ncast-rs reads version " + std::to_string(kVersion) + ")");
    m.name = j.at("file").get<std::string>();
    m.file_size = count(j, "file_size");
    m.file_sha256 = j.at("file_sha256").get<std::string>();
    m.k = count(j, "k");
    m.m = count(j, "m");
    const std::string matrix = j.at("matrix").get<std::string>();
    const auto kind = rs::parse_matrix_kind(matrix);
    if (!kind || *kind == rs::MatrixKind::custom)
      throw ManifestError(where + "unknown matrix \"" + matrix + "\" (cauchy or vandermonde)");
    m.matrix = *kind;
    m.shard_size = count(j, "shard_size");
    const auto& shards = j.at("shards");
    if (!shards.is_array()) throw ManifestError(where + "\"shards\" is not a list");
    for (const auto& s : shards) {
      const std::size_t i = m.shards.size();
      if (s.is_object() && s.contains("index") && count(s, "index") != i)
        throw ManifestError(where + "shard entry " + std::to_string(i) + " has index " + s["index"].dump());
      m.shards.push_back({s.at("file").get<std::string>(), s.at("sha256").get<std::string>()});
    }
  } catch (const nlohmann::json::exception& e) {
    throw ManifestError(where + "missing or mistyped field (" + e.what() + ")");
  }

  try {
    rs::check_code_size(m.k, m.m);
  } catch (const std::invalid_argument& e) {
    throw ManifestError(where + e.what());
  }
  if (!plain_file_name(m.name)) throw ManifestError(where + "\"file\" must be a plain file name");
  if (!is_sha256_hex(m.file_sha256)) throw ManifestError(where + "\"file_sha256\" is not a SHA-256 digest");
  if (m.shard_size != shard_size_for(m.file_size, m.k))
    throw ManifestError(where + "shard_size " + std::to_string(m.shard_size) + " does not fit file_size " +
                        std::to_string(m.file_size) + " and k " + std::to_string(m.k) + " (expected " +
                        std::to_string(shard_size_for(m.file_size, m.k)) + ")");
  if (m.shards.size() != m.k + m.m)
    throw ManifestError(where + "lists " + std::to_string(m.shards.size()) + " shards for a " + std::to_string(m.k) +
                        "+" + std::to_string(m.m) + " code");
  for (std::size_t i = 0; i < m.shards.size(); ++i) check_shard_entry(m, i, where);
  return m;
}

}  // namespace ncast::tools
