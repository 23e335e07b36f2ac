#pragma once
// The subcommands of ncast-bench; each lives in its own <name>_bench.cpp.
#include <span>

#include "cli/subcommands.hpp"

namespace ncast::bench {

int run_gf(int argc, char** argv);
int run_rs(int argc, char** argv);
int run_ceiling(int argc, char** argv);
int run_rlnc(int argc, char** argv);
int run_serve(int argc, char** argv);
#ifdef NCAST_HAVE_CUDA
int run_gpu(int argc, char** argv);
#endif

std::span<const cli::Subcommand> subcommands();

}  // namespace ncast::bench
