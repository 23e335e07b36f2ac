#pragma once
// The shard files a manifest describes: which are intact, and streaming the k survivors through the
// code to rebuild the others (decode and repair both do).
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "coding/rs/codec.hpp"
#include "coding/rs/stream.hpp"
#include "tools/ncast-rs/manifest.hpp"
#include "tools/ncast-rs/progress.hpp"

namespace ncast::tools {

enum class ShardStatus {
  unchecked,  // present with the right size, contents not hashed yet
  ok,
  missing,
  corrupt,
};

struct ShardReport {
  ShardStatus status = ShardStatus::unchecked;
  std::string detail;  // why a shard is missing or corrupt
};

std::string_view to_string(ShardStatus status);

// Presence and size of every shard, without reading them; a shard whose name is a symbolic link to the
// file another shard's name reaches counts as corrupt.
std::vector<ShardReport> stat_shards(const Manifest& manifest, const fs::path& dir);
// Presence, size and SHA-256 of every shard, hashing several at once; adds the bytes hashed to
// *bytes_hashed when given.
std::vector<ShardReport> check_shards(const Manifest& manifest, const fs::path& dir, bool show_progress,
                                      std::uint64_t* bytes_hashed = nullptr);

// Bytes per shard of each streamed slice: the codec's default, less for small shards (no point in
// buffers larger than what they will hold).
std::size_t slice_bytes_for(const rs::Codec& codec, std::uint64_t shard_size);

// Shards that may serve as survivors (ok or unchecked).
std::vector<std::size_t> usable_shards(const std::vector<ShardReport>& reports);
// "big.bin.001 missing, big.bin.004 corrupt (checksum mismatch)".
std::string describe_damage(const Manifest& manifest, const std::vector<ShardReport>& reports);

// One pass over the shards: reads the k lowest-numbered shards not in erased (hashing each), rebuilds
// the shards in wanted, and hands every slice to sink (Slice::active: the survivors and the rebuilt).
// Returns the survivors whose SHA-256 did not match the manifest: the caller must discard what sink
// produced and try again without them.
std::vector<std::size_t> stream_survivors(const rs::Codec& codec, const Manifest& manifest, const fs::path& dir,
                                          const std::vector<std::size_t>& erased,
                                          const std::vector<std::size_t>& wanted, const rs::SliceFn& sink,
                                          Progress& progress);

}  // namespace ncast::tools
