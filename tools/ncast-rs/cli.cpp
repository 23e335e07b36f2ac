#include "tools/ncast-rs/cli.hpp"

#include <iostream>

#include "cli/subcommand_line.hpp"

namespace ncast::tools {

std::span<const cli::Subcommand> commands() {
  static constexpr cli::Subcommand kAll[] = {
      {"encode", "split FILE into K data + M parity shards and a manifest", run_encode},
      {"decode", "rebuild the file from any K intact shards", run_decode},
      {"verify", "check every shard against the manifest", run_verify},
      {"repair", "regenerate missing or corrupt shards", run_repair},
  };
  return kAll;
}

std::optional<po::variables_map> parse_command_line(int argc, char** argv, std::string_view usage,
                                                    const po::options_description& options, const char* positional) {
  return cli::parse_subcommand_line(argc, argv, usage, options, {.name = positional, .required = true}, std::cout);
}

Backend parse_backend_option(const std::string& name) {
  const auto b = parse_backend(name);
  if (!b) throw UsageError("--backend must be auto, cpu or cuda, not '" + name + "'");
  return *b;
}

}  // namespace ncast::tools
