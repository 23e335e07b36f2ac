// ncast-rs decode MANIFEST -o OUT: the file back from any K intact shards. Shards failing their
// checksum count as missing; the output takes its name only once its own SHA-256 matches the manifest.
#include <algorithm>
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

// What the command line asks for.
struct DecodeRequest {
  fs::path manifest_path, out;
  Backend backend = Backend::automatic;
  bool force = false, quiet = false;
};

std::optional<DecodeRequest> parse_request(int argc, char** argv) {
  DecodeRequest r;
  std::string output, backend = "auto";
  po::options_description desc("ncast-rs decode options");
  desc.add_options()("output,o", po::value(&output)->required(), "the file to write")(
      "force,f", po::bool_switch(&r.force), "replace OUT if it exists")(
      "backend", po::value(&backend)->default_value(backend), "coding engine: auto, cpu or cuda")(
      "quiet,q", po::bool_switch(&r.quiet), "no progress bar, no summary")("help,h", "show this help");
  const auto vm = parse_command_line(
      argc, argv,
      "usage: ncast-rs decode MANIFEST -o OUT [--force]\n\n"
      "Rebuilds the file from any K intact shards (a shard failing its checksum counts as missing).\n"
      "With fewer than K, exits 1 and OUT is not created.",
      desc, "manifest");
  if (!vm) return std::nullopt;
  r.manifest_path = (*vm)["manifest"].as<std::string>();
  r.out = output;
  r.backend = parse_backend_option(backend);
  return r;
}

// The shards a decode leaves out (erased: every one not usable) and the data shards among them, which
// it rebuilds.
struct Plan {
  std::vector<std::size_t> erased, rebuilt;
};

Plan plan_for(const Manifest& man, const std::vector<std::size_t>& usable) {
  Plan p;
  for (std::size_t i = 0; i < man.k + man.m; ++i)
    if (std::find(usable.begin(), usable.end(), i) == usable.end()) {
      p.erased.push_back(i);
      if (i < man.k) p.rebuilt.push_back(i);
    }
  return p;
}

[[noreturn]] void too_few_intact(const Manifest& man, const fs::path& dir, const fs::path& out, bool quiet) {
  // Failing anyway: hash the shards not yet read, so that the report says exactly what is intact.
  const auto reports = check_shards(man, dir, !quiet);
  const auto usable = usable_shards(reports);
  throw std::runtime_error("cannot decode " + man.name + ": " + std::to_string(usable.size()) + " of " +
                           std::to_string(man.k + man.m) + " shards intact, " + std::to_string(man.k) + " needed (" +
                           describe_damage(man, reports) + "); " + out.string() + " not written");
}

void print_summary(const Manifest& man, const Plan& plan, const fs::path& out, double seconds) {
  std::cout << "decoded " << man.name << " (" << format_bytes(man.file_size) << ") from " << man.k << " of "
            << man.k + man.m << " shards";
  if (!plan.rebuilt.empty())
    std::cout << ", " << plan.rebuilt.size() << " data shard" << (plan.rebuilt.size() > 1 ? "s" : "") << " rebuilt";
  std::cout << ", in " << format_seconds(seconds) << " (" << format_rate(man.file_size, seconds) << ") -> "
            << out.string() << "\n";
}

// One attempt from the shards the reports leave usable. A shard found to fail its checksum on the way
// is marked corrupt in reports and the attempt returns false, its output removed.
bool try_decode(const rs::Codec& codec, const Manifest& man, const fs::path& dir, const DecodeRequest& r,
                std::vector<ShardReport>& reports) {
  const auto usable = usable_shards(reports);
  if (usable.size() < man.k) too_few_intact(man, dir, r.out, r.quiet);
  const Plan plan = plan_for(man, usable);

  TempFile temp(r.out);
  temp.truncate(man.file_size);
  Progress progress("decode", man.file_size, !r.quiet);
  const std::uint64_t S = man.shard_size;
  const auto sink = [&](const rs::Slice& s) {
    for (std::size_t j = 0; j < man.k; ++j) {
      const std::uint64_t start = j * S + s.offset;
      if (start >= man.file_size) break;
      const std::size_t len = static_cast<std::size_t>(std::min<std::uint64_t>(s.len, man.file_size - start));
      if (!all_zero(s.shards[j], len)) temp.write_at(s.shards[j], len, start);
    }
  };
  const auto bad = stream_survivors(codec, man, dir, plan.erased, plan.rebuilt, sink, progress);
  for (std::size_t b : bad) {
    reports[b] = {ShardStatus::corrupt, "checksum mismatch"};
    std::cerr << "ncast-rs decode: " << man.shards[b].file << " fails its checksum; decoding without it\n";
  }
  if (!bad.empty()) return false;
  // End to end: the file as written must be the file that was encoded.
  if (sha256_of(temp) != man.file_sha256)
    throw std::runtime_error("the decoded data does not match the manifest's file_sha256; " + r.out.string() +
                             " not written");
  temp.sync();
  temp.commit();
  sync_directory(r.out.has_parent_path() ? r.out.parent_path() : ".");

  const double seconds = progress.finish();
  if (!r.quiet) print_summary(man, plan, r.out, seconds);
  return true;
}

}  // namespace

int run_decode(int argc, char** argv) {
  const auto request = parse_request(argc, argv);
  if (!request) return kExitOk;
  const DecodeRequest& r = *request;
  const Manifest man = Manifest::load(r.manifest_path);
  const fs::path dir = r.manifest_path.has_parent_path() ? r.manifest_path.parent_path() : ".";
  check_output(r.out, r.manifest_path, man, dir, r.force);

  rs::Codec codec(man.k, man.m, {.matrix = man.matrix, .backend = r.backend});
  std::vector<ShardReport> reports = stat_shards(man, dir);
  for (;;)
    if (try_decode(codec, man, dir, r, reports)) return kExitOk;
}

}  // namespace ncast::tools
