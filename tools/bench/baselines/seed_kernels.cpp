#include "tools/bench/baselines/seed_kernels.hpp"

#include <stdexcept>

#include "tools/bench/baselines/seed_launch.hpp"

namespace ncast::bench::baselines {
namespace {

constexpr SeedKernel kSeedKernels[] = {SeedKernel::nuclei_loop, SeedKernel::gibraltar_logexp,
                                       SeedKernel::product_table};

}  // namespace

std::string_view to_string(SeedKernel kernel) {
  switch (kernel) {
    case SeedKernel::nuclei_loop: return "nuclei-loop";
    case SeedKernel::gibraltar_logexp: return "gibraltar-logexp";
    case SeedKernel::product_table: return "product-table";
  }
  return "unknown";
}

std::optional<SeedKernel> parse_seed_kernel(std::string_view name) {
  for (SeedKernel k : kSeedKernels)
    if (name == to_string(k)) return k;
  return std::nullopt;
}

std::span<const SeedKernel> all_seed_kernels() { return kSeedKernels; }

void multiply(SeedKernel kernel, const gpu::Product& product, bool accumulate, cudaStream_t stream) {
  const auto args = gpu::detail::single_product_args(product, accumulate);
  if (!args) return;
  switch (kernel) {
    case SeedKernel::nuclei_loop: return launch_nuclei_loop(*args, stream);
    case SeedKernel::gibraltar_logexp: return launch_gibraltar_logexp(*args, stream);
    case SeedKernel::product_table: return launch_product_table(*args, stream);
  }
  throw std::invalid_argument("GPU multiply: unknown seed-style kernel");
}

}  // namespace ncast::bench::baselines
