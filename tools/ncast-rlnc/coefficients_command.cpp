// ncast-rlnc coefficients: the seeded vectors of coded symbols, one known-answer line each, so another
// implementation (a peer in another language, the CUDA backend) can be checked against this one.
#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>
#include <vector>

#include "cli/subcommand_line.hpp"
#include "coding/rlnc/coefficients.hpp"
#include "coding/rlnc/error.hpp"
#include "coding/rlnc/generation.hpp"
#include "tools/ncast-rlnc/commands.hpp"

namespace ncast::rlnc_tool {

namespace po = boost::program_options;

int run_coefficients(int argc, char** argv) {
  std::uint32_t server = 0, stream = 0, segment = 0, index = 0, count = 1;
  std::size_t n = 128;
  double density = 1.0;
  po::options_description desc("ncast-rlnc coefficients options");
  desc.add_options()("server", po::value(&server)->default_value(server), "server id")(
      "stream", po::value(&stream)->default_value(stream), "stream id")(
      "segment", po::value(&segment)->default_value(segment), "segment (generation)")(
      "index", po::value(&index)->default_value(index), "first coded-symbol index")(
      "count", po::value(&count)->default_value(count), "how many consecutive indices")(
      "n", po::value(&n)->default_value(n), "generation size, 1..256")(
      "density", po::value(&density)->default_value(density), "fraction of non-zero coefficients, (0, 1]")(
      "help,h", "show this help");
  const auto vm =
      cli::parse_subcommand_line(argc, argv,
                                 "usage: ncast-rlnc coefficients [options]\n\nPrints one line per coded symbol:\n"
                                 "  coefficients SERVER STREAM SEGMENT INDEX N THRESHOLD : HEX\n"
                                 "(docs/coefficients.md describes the mapping and the format).",
                                 desc, {}, std::cout);
  if (!vm) return kExitOk;
  if (n < 1 || n > rlnc::kMaxSymbols) throw UsageError("--n must be in 1..256");
  rlnc::Density d;
  try {
    d = rlnc::Density::from_fraction(density);
  } catch (const rlnc::Error& e) {
    throw UsageError(std::string("--density: ") + e.what());
  }
  const rlnc::SeedContext seeds{rlnc::coefficient_seed(server, stream), segment};
  std::vector<std::uint8_t> c(n);
  for (std::uint32_t i = 0; i < count; ++i) {
    rlnc::draw_coefficients(seeds, index + i, d, c);
    std::printf("coefficients %u %u %u %u %zu %u : ", server, stream, segment, index + i, n, d.threshold());
    for (const auto b : c) std::printf("%02x", b);
    std::printf("\n");
  }
  return kExitOk;
}

}  // namespace ncast::rlnc_tool
