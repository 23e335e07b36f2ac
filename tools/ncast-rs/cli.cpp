#include "tools/ncast-rs/cli.hpp"

#include <iostream>

namespace ncast::tools {

std::span<const Command> commands() {
  static constexpr Command kAll[] = {
      {"encode", "split FILE into K data + M parity shards and a manifest", run_encode},
      {"decode", "rebuild the file from any K intact shards", run_decode},
      {"verify", "check every shard against the manifest", run_verify},
      {"repair", "regenerate missing or corrupt shards", run_repair},
  };
  return kAll;
}

bool parse_command_line(int argc, char** argv, const std::string& usage, const po::options_description& options,
                        const char* positional, po::variables_map& vm) {
  po::options_description hidden;
  hidden.add_options()(positional, po::value<std::string>());
  po::options_description all;
  all.add(options).add(hidden);
  po::positional_options_description pos;
  pos.add(positional, 1);
  try {
    po::store(po::command_line_parser(argc, argv).options(all).positional(pos).run(), vm);
    if (vm.count("help")) {
      std::cout << usage << "\n\n" << options << "\n";
      return false;
    }
    if (!vm.count(positional)) throw UsageError(std::string("missing ") + positional);
    po::notify(vm);
  } catch (const po::error& e) {
    throw UsageError(e.what());
  }
  return true;
}

Backend parse_backend_option(const std::string& name) {
  const auto b = parse_backend(name);
  if (!b) throw UsageError("--backend must be auto, cpu or cuda, not '" + name + "'");
  return *b;
}

}  // namespace ncast::tools
