#pragma once
// The seed papers' GF(2^8) product techniques on the GPU, as ncast-bench's anchors: the engine never
// runs them (gpu/gf_kernel.hpp holds the kernels it chooses from), the benchmark quotes every engine
// kernel's rate against them.
#include <cuda_runtime.h>

#include <optional>
#include <span>
#include <string_view>

#include "gpu/gf_kernel.hpp"

namespace ncast::bench::baselines {

enum class SeedKernel {
  nuclei_loop,       // Nuclei (Shojania, Li, Wang 2009): word-wise shift/xor multiply, one coded word per thread
  gibraltar_logexp,  // Gibraltar (Curry et al. 2011): log/exp tables in shared memory, outputs in registers
  product_table,     // the full 256×256 product table (64 KiB) in shared memory
};

std::string_view to_string(SeedKernel kernel);
std::optional<SeedKernel> parse_seed_kernel(std::string_view name);
std::span<const SeedKernel> all_seed_kernels();

// Enqueues D = C·S (D ^= C·S when accumulate) on stream, with the checks and layout of
// gpu::multiply: std::invalid_argument for mismatched shapes or layouts, CudaError when the launch
// fails.
void multiply(SeedKernel kernel, const gpu::Product& product, bool accumulate, cudaStream_t stream);

}  // namespace ncast::bench::baselines
