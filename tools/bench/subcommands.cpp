#include "tools/bench/subcommands.hpp"

namespace ncast::bench {

std::span<const cli::Subcommand> subcommands() {
  static constexpr cli::Subcommand kAll[] = {
      {"gf", "GF(2^8) region kernels per SIMD level, against ISA-L ec_encode_data", run_gf},
      {"rs", "Reed-Solomon encode and decode (cached and first call), against ISA-L", run_rs},
      {"ceiling", "RS encode (ncast and ISA-L) against an XOR pass with the same memory traffic", run_ceiling},
      {"rlnc", "RLNC encode, progressive decode and recode on one core, against ISA-L", run_rlnc},
      {"serve", "largest swarm of realtime peers one ncast-server keeps up with, against the raw UDP rate", run_serve},
#ifdef NCAST_HAVE_CUDA
      {"gpu", "CUDA kernels side by side (RLNC and RS shapes), against the seed-style kernels and ISA-L", run_gpu},
#endif
  };
  return kAll;
}

}  // namespace ncast::bench
