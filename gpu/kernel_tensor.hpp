#pragma once
// The tensor-core (b1 wgmma) kernel's launcher, beside the CUDA-core ones of kernel_launch.hpp: its
// code exists only for sm_90a, so the dispatcher asks whether this device can run it first.
#include <cuda_runtime.h>

#include <cstddef>

#include "gpu/kernel_launch.hpp"

namespace ncast::gpu::detail {

// Sources per launch; products with more go in slices of this many, the later ones accumulating.
inline constexpr std::size_t kTensorMaxSources = 256;

// Whether the current device has an image of the kernel (compute capability 9.0, the sm_90a build).
bool tensor_kernel_present();
// D = C·S for args; max_k is the largest k among the products.
void launch_tensor(const KernelArgs& args, std::size_t max_k, cudaStream_t stream);

}  // namespace ncast::gpu::detail
