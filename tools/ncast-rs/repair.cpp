// ncast-rs repair MANIFEST: missing and corrupt shards regenerated from K intact ones; each rebuilt
// shard must match its SHA-256 in the manifest before it replaces anything.
#include <iostream>
#include <optional>
#include <vector>

#include "coding/rs/codec.hpp"
#include "tools/ncast-rs/cli.hpp"
#include "tools/ncast-rs/files.hpp"
#include "tools/ncast-rs/manifest.hpp"
#include "tools/ncast-rs/progress.hpp"
#include "tools/ncast-rs/sha256.hpp"
#include "tools/ncast-rs/shards.hpp"

namespace ncast::tools {

int run_repair(int argc, char** argv) {
  std::string backend = "auto";
  bool quiet = false;
  po::options_description desc("ncast-rs repair options");
  desc.add_options()("backend", po::value(&backend)->default_value(backend), "coding engine: auto, cpu or cuda")(
      "quiet,q", po::bool_switch(&quiet), "no progress bar, no summary")("help,h", "show this help");
  const auto vm =
      parse_command_line(argc, argv,
                         "usage: ncast-rs repair MANIFEST\n\n"
                         "Checks every shard, then regenerates the missing and corrupt ones from K intact shards.\n"
                         "A rebuilt shard replaces the damaged one only once it matches the manifest's SHA-256.",
                         desc, "manifest");
  if (!vm) return kExitOk;

  const fs::path manifest_path = (*vm)["manifest"].as<std::string>();
  const Backend engine = parse_backend_option(backend);
  const Manifest man = Manifest::load(manifest_path);
  const fs::path dir = manifest_path.has_parent_path() ? manifest_path.parent_path() : ".";
  const std::size_t n = man.k + man.m;

  const auto reports = check_shards(man, dir, !quiet);
  std::vector<std::size_t> damaged;
  for (std::size_t i = 0; i < n; ++i)
    if (reports[i].status != ShardStatus::ok) damaged.push_back(i);
  if (damaged.empty()) {
    if (!quiet) std::cout << "all " << n << " shards of " << man.name << " intact; nothing to repair\n";
    return kExitOk;
  }
  if (n - damaged.size() < man.k)
    throw std::runtime_error("cannot repair " + man.name + ": " + std::to_string(n - damaged.size()) + " of " +
                             std::to_string(n) + " shards intact, " + std::to_string(man.k) + " needed (" +
                             describe_damage(man, reports) + ")");

  // A rebuilt shard takes its place by a rename, which replaces a file or a link but never a
  // directory (nor should it: a directory may hold anything). Say so before doing the work.
  for (std::size_t i : damaged)
    if (fs::is_directory(fs::symlink_status(dir / man.shards[i].file)))
      throw std::runtime_error((dir / man.shards[i].file).string() +
                               " is a directory where a shard belongs; move it away and run repair again (nothing "
                               "was changed)");

  rs::Codec codec(man.k, man.m, {.matrix = man.matrix, .backend = engine});
  std::vector<std::optional<TempFile>> temps(n);
  std::vector<std::optional<Sha256>> digests(n);
  for (std::size_t i : damaged) {
    temps[i].emplace(dir / man.shards[i].file);
    temps[i]->truncate(man.shard_size);
    digests[i].emplace();
  }
  Progress progress("repair", man.file_size, !quiet);
  const auto sink = [&](const rs::Slice& s) {
    for (std::size_t i : damaged) {
      digests[i]->update(s.shards[i], s.len);
      if (!all_zero(s.shards[i], s.len)) temps[i]->write_at(s.shards[i], s.len, s.offset);
    }
  };
  const auto bad = stream_survivors(codec, man, dir, damaged, damaged, sink, progress);
  if (!bad.empty())
    throw std::runtime_error(man.shards[bad.front()].file +
                             " changed while the repair read it; nothing replaced (run repair again)");
  for (std::size_t i : damaged)
    if (digests[i]->hex() != man.shards[i].sha256)
      throw std::runtime_error("rebuilt " + man.shards[i].file +
                               " does not match its SHA-256 in the manifest (do the manifest and the shards belong "
                               "together?); nothing replaced");
  for (std::size_t i : damaged) temps[i]->sync();
  for (std::size_t i : damaged) temps[i]->commit();
  sync_directory(dir);

  const double seconds = progress.finish();
  if (!quiet) {
    for (std::size_t i : damaged)
      std::cout << "rebuilt " << man.shards[i].file << " (was " << to_string(reports[i].status)
                << (reports[i].detail.empty() ? "" : ": " + reports[i].detail) << ")\n";
    std::cout << "repaired " << damaged.size() << " of " << n << " shards of " << man.name << " in "
              << format_seconds(seconds) << " (" << format_rate(man.file_size, seconds) << ")\n";
  }
  return kExitOk;
}

}  // namespace ncast::tools
