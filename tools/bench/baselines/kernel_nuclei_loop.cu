// Nuclei's encoder (Shojania, Li, Wang, INFOCOM 2009, Fig. 4 and §IV-C): a GF(2^8) multiply of a
// coefficient by four bytes at once with shifts, masks and a multiply by 0x1D for the reduction,
// looping over the coefficient's bits; each thread computes one 4-byte word of one coded block.
// A seed-style baseline for ncast-bench, not tuned beyond the paper.
#include "gpu/cuda_check.hpp"
#include "gpu/kernel_common.cuh"
#include "tools/bench/baselines/seed_launch.hpp"

namespace ncast::bench::baselines {

using namespace gpu::detail;  // the kernels' argument types and device helpers

namespace {

constexpr unsigned kThreads = 256;

__device__ inline std::uint32_t loop_gf_multiply_word(std::uint32_t factor, std::uint32_t data) {
  std::uint32_t result = 0;
  while (factor != 0) {
    if (factor & 1u) result ^= data;
    const std::uint32_t reduce = ((data & 0x80808080u) >> 7) * 0x1Du;  // 0x1D in each overflowing byte
    data = ((data & 0x7F7F7F7Fu) << 1) ^ reduce;
    factor >>= 1;
  }
  return result;
}

__global__ void __launch_bounds__(kThreads) nuclei_loop_kernel(KernelArgs args) {
  const KernelProblem p = block_problem(args, blockIdx.z);
  const std::size_t col = (std::size_t{blockIdx.x} * kThreads + threadIdx.x) * 4;
  if (col >= p.len) return;
  for (std::size_t i = blockIdx.y; i < p.m; i += gridDim.y) {
    const std::uint8_t* coefs = p.coefs + i * p.coef_pitch;
    std::uint32_t acc = 0;
    for (std::size_t j = 0; j < p.k; ++j)
      acc ^= loop_gf_multiply_word(__ldg(coefs + j), load_word(p.src + j * p.src_pitch, col, p.len));
    store_word(p.dst + i * p.dst_pitch, col, p.len, acc, args.accumulate);
  }
}

}  // namespace

void launch_nuclei_loop(const KernelArgs& args, cudaStream_t stream) {
  const std::size_t words = (args.max_len + 3) / 4;
  const dim3 grid(static_cast<unsigned>((words + kThreads - 1) / kThreads),
                  static_cast<unsigned>(args.max_m < kMaxGridYZ ? args.max_m : kMaxGridYZ), args.count);
  nuclei_loop_kernel<<<grid, kThreads, 0, stream>>>(args);
  gpu::check_launch("nuclei_loop");
}

}  // namespace ncast::bench::baselines
