// ncast-rs verify MANIFEST: every shard hashed and reported ok, missing or corrupt; the exit code
// says whether the file can still be decoded.
#include <iostream>

#include "tools/ncast-rs/cli.hpp"
#include "tools/ncast-rs/manifest.hpp"
#include "tools/ncast-rs/progress.hpp"
#include "tools/ncast-rs/shards.hpp"

namespace ncast::tools {

int run_verify(int argc, char** argv) {
  bool quiet = false;
  po::options_description desc("ncast-rs verify options");
  desc.add_options()("quiet,q", po::bool_switch(&quiet), "print only damaged shards; the exit code says the rest")(
      "help,h", "show this help");
  const auto vm =
      parse_command_line(argc, argv,
                         "usage: ncast-rs verify MANIFEST\n\n"
                         "Checks each shard's size and SHA-256 against the manifest. Exit status: 0 every shard\n"
                         "intact; 3 some damaged but the file is decodable (run ncast-rs repair); 1 not decodable.",
                         desc, "manifest");
  if (!vm) return kExitOk;

  const fs::path manifest_path = (*vm)["manifest"].as<std::string>();
  const Manifest man = Manifest::load(manifest_path);
  const fs::path dir = manifest_path.has_parent_path() ? manifest_path.parent_path() : ".";
  const Progress timer("", 0, false);
  std::uint64_t bytes = 0;
  const auto reports = check_shards(man, dir, !quiet, &bytes);
  const double seconds = timer.seconds();

  std::size_t intact = 0;
  for (std::size_t i = 0; i < reports.size(); ++i) {
    const bool ok = reports[i].status == ShardStatus::ok;
    intact += ok;
    if (quiet && ok) continue;
    std::cout << man.shards[i].file << "  " << to_string(reports[i].status);
    if (!reports[i].detail.empty()) std::cout << " (" << reports[i].detail << ")";
    std::cout << "\n";
  }
  const std::size_t n = man.k + man.m;
  const int code = intact == n ? kExitOk : intact >= man.k ? kExitDamaged : kExitFailure;
  if (!quiet) {
    std::cout << intact << " of " << n << " shards intact (" << man.k << " needed): " << man.name
              << (code == kExitOk        ? " is decodable"
                  : code == kExitDamaged ? " is decodable; run ncast-rs repair to restore the damaged shards"
                                         : " cannot be decoded")
              << "\n";
    std::cout << "checked " << n << " shards in " << format_seconds(seconds) << " (" << format_rate(bytes, seconds)
              << ")\n";
  }
  return code;
}

}  // namespace ncast::tools
