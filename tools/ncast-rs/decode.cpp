// ncast-rs decode MANIFEST -o OUT: the file back from any K intact shards. Shards failing their
// checksum count as missing; the output takes its name only once its own SHA-256 matches the manifest.
#include <iostream>
#include <vector>

#include "coding/rs/codec.hpp"
#include "tools/ncast-rs/cli.hpp"
#include "tools/ncast-rs/files.hpp"
#include "tools/ncast-rs/manifest.hpp"
#include "tools/ncast-rs/progress.hpp"
#include "tools/ncast-rs/sha256.hpp"
#include "tools/ncast-rs/shards.hpp"

namespace ncast::tools {
namespace {

// OUT may replace an old output with --force, never one of the inputs it is decoded from.
void check_output(const fs::path& out, const fs::path& manifest_path, const Manifest& man, const fs::path& dir,
                  bool force) {
  const auto status = fs::status(out);
  if (fs::exists(status)) {
    if (fs::is_directory(status)) throw std::runtime_error(out.string() + " is a directory");
    if (!force) throw std::runtime_error(out.string() + " exists (use --force to replace it)");
    std::vector<fs::path> inputs{manifest_path};
    for (const auto& s : man.shards) inputs.push_back(dir / s.file);
    for (const auto& in : inputs)
      if (fs::exists(in) && fs::equivalent(in, out))
        throw std::runtime_error("refusing to write the output over its input " + in.string());
  }
  const fs::path parent = out.has_parent_path() ? out.parent_path() : ".";
  if (!fs::is_directory(parent)) throw std::runtime_error("no directory " + parent.string() + " for " + out.string());
}

}  // namespace

int run_decode(int argc, char** argv) {
  std::string output, backend = "auto";
  bool force = false, quiet = false;
  po::options_description desc("ncast-rs decode options");
  desc.add_options()("output,o", po::value(&output)->required(), "the file to write")(
      "force,f", po::bool_switch(&force), "replace OUT if it exists")(
      "backend", po::value(&backend)->default_value(backend), "coding engine: auto, cpu or cuda")(
      "quiet,q", po::bool_switch(&quiet), "no progress bar, no summary")("help,h", "show this help");
  po::variables_map vm;
  if (!parse_command_line(
          argc, argv,
          "usage: ncast-rs decode MANIFEST -o OUT [--force]\n\n"
          "Rebuilds the file from any K intact shards (a shard failing its checksum counts as missing).\n"
          "With fewer than K, exits 1 and OUT is not created.",
          desc, "manifest", vm))
    return kExitOk;

  const fs::path manifest_path = vm["manifest"].as<std::string>();
  const Backend engine = parse_backend_option(backend);
  const Manifest man = Manifest::load(manifest_path);
  const fs::path dir = manifest_path.has_parent_path() ? manifest_path.parent_path() : ".";
  const fs::path out = output;
  check_output(out, manifest_path, man, dir, force);

  rs::Codec codec(man.k, man.m, {.matrix = man.matrix, .backend = engine});
  std::vector<ShardReport> reports = stat_shards(man, dir);
  for (;;) {
    auto usable = usable_shards(reports);
    if (usable.size() < man.k) {
      // Failing anyway: hash the shards not yet read, so that the report says exactly what is intact.
      reports = check_shards(man, dir, !quiet);
      usable = usable_shards(reports);
      throw std::runtime_error("cannot decode " + man.name + ": " + std::to_string(usable.size()) + " of " +
                               std::to_string(man.k + man.m) + " shards intact, " + std::to_string(man.k) +
                               " needed (" + describe_damage(man, reports) + "); " + out.string() + " not written");
    }
    std::vector<std::size_t> erased, rebuilt;
    for (std::size_t i = 0; i < man.k + man.m; ++i)
      if (std::find(usable.begin(), usable.end(), i) == usable.end()) {
        erased.push_back(i);
        if (i < man.k) rebuilt.push_back(i);
      }

    TempFile temp(out);
    temp.truncate(man.file_size);
    Progress progress("decode", man.file_size, !quiet);
    const std::uint64_t S = man.shard_size;
    const auto sink = [&](const rs::Slice& s) {
      for (std::size_t j = 0; j < man.k; ++j) {
        const std::uint64_t start = j * S + s.offset;
        if (start >= man.file_size) break;
        const std::size_t len = static_cast<std::size_t>(std::min<std::uint64_t>(s.len, man.file_size - start));
        if (!all_zero(s.shards[j], len)) temp.write_at(s.shards[j], len, start);
      }
    };
    const auto bad = stream_survivors(codec, man, dir, erased, rebuilt, sink, progress);
    if (!bad.empty()) {
      for (std::size_t b : bad) {
        reports[b] = {ShardStatus::corrupt, "checksum mismatch"};
        std::cerr << "ncast-rs decode: " << man.shards[b].file << " fails its checksum; decoding without it\n";
      }
      continue;  // temp is removed on the way round
    }
    // End to end: the file as written must be the file that was encoded.
    if (sha256_of(temp) != man.file_sha256)
      throw std::runtime_error("the decoded data does not match the manifest's file_sha256; " + out.string() +
                               " not written");
    temp.sync();
    temp.commit();
    sync_directory(out.has_parent_path() ? out.parent_path() : ".");

    const double seconds = progress.finish();
    if (!quiet) {
      std::cout << "decoded " << man.name << " (" << format_bytes(man.file_size) << ") from " << man.k << " of "
                << man.k + man.m << " shards";
      if (!rebuilt.empty())
        std::cout << ", " << rebuilt.size() << " data shard" << (rebuilt.size() > 1 ? "s" : "") << " rebuilt";
      std::cout << ", in " << format_seconds(seconds) << " (" << format_rate(man.file_size, seconds) << ") -> "
                << out.string() << "\n";
    }
    return kExitOk;
  }
}

}  // namespace ncast::tools
