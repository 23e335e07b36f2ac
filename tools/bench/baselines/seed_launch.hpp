#pragma once
// The seed-style kernels' launchers, which seed_kernels.cpp dispatches to: arguments already checked
// (gpu::detail::single_product_args), as the engine's launchers take them.
#include <cuda_runtime.h>

#include "gpu/kernel_launch.hpp"

namespace ncast::bench::baselines {

void launch_nuclei_loop(const gpu::detail::KernelArgs& args, cudaStream_t stream);
void launch_gibraltar_logexp(const gpu::detail::KernelArgs& args, cudaStream_t stream);
void launch_product_table(const gpu::detail::KernelArgs& args, cudaStream_t stream);

}  // namespace ncast::bench::baselines
