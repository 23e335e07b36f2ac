#pragma once
// The subcommands of ncast-bench; each lives in its own <name>_bench.cpp.
#include <span>
#include <string_view>

namespace ncast::bench {

struct Subcommand {
  std::string_view name;
  std::string_view summary;
  int (*run)(int argc, char** argv);  // argv[0] is the subcommand's name
};

int run_gf(int argc, char** argv);
int run_rs(int argc, char** argv);
int run_rlnc(int argc, char** argv);
int run_serve(int argc, char** argv);
#ifdef NCAST_HAVE_CUDA
int run_gpu(int argc, char** argv);
#endif

std::span<const Subcommand> subcommands();

}  // namespace ncast::bench
