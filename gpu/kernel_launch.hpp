#pragma once
// What the dispatcher (gf_kernel.cpp) hands each kernel's launcher: plain pointers and sizes, already
// validated, so the .cu files hold only device code and its launch geometry.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace ncast::gpu::detail {

// m outputs of len bytes from k sources. When skip is not null and the device int it points to is
// non-zero when the kernel runs, the product is left alone (a decode job that an earlier kernel of
// the stream found singular), so no host round trip has to sit between the two.
struct KernelProblem {
  const std::uint8_t* coefs;
  std::size_t coef_pitch;
  const std::uint8_t* src;
  std::size_t src_pitch;
  std::uint8_t* dst;
  std::size_t dst_pitch;
  std::size_t m, k, len;
  const int* skip;
};

// `count` problems, taken from the device array `batch` when it is not null, else `one` (count 1);
// the grid is sized for the largest m and len among them.
struct KernelArgs {
  std::size_t max_m, max_len;
  bool accumulate;
  KernelProblem one;
  const KernelProblem* batch;
  unsigned count;
};

void launch_prmt(const KernelArgs& args, int tile_outputs, int tile_words, cudaStream_t stream);
void launch_bitslice(const KernelArgs& args, cudaStream_t stream);

// Grid dimensions y and z are limited to 65535; kernels loop over what does not fit.
inline constexpr unsigned kMaxGridYZ = 65535;

}  // namespace ncast::gpu::detail
