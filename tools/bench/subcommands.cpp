#include "tools/bench/subcommands.hpp"

namespace ncast::bench {

std::span<const Subcommand> subcommands() {
  static constexpr Subcommand kAll[] = {
    {"gf", "GF(2^8) region kernels per SIMD level, against ISA-L ec_encode_data", run_gf},
    {"rs", "Reed-Solomon encode and decode (cached and first call), against ISA-L", run_rs},
  };
  return kAll;
}

}  // namespace ncast::bench
