// Gibraltar's encoder (Curry, Skjellum, Ward, Brightwell 2011, §4): log and exp tables copied into
// shared memory, each thread reading 4 bytes of every source and keeping its outputs in registers;
// a product is exp[log c + log b], two table lookups per byte. A seed-style baseline for ncast-bench.
#include "gpu/cuda_check.hpp"
#include "gpu/kernel_common.cuh"
#include "tools/bench/baselines/seed_launch.hpp"

namespace ncast::bench::baselines {

using namespace gpu::detail;  // the kernels' argument types and device helpers

namespace {

constexpr unsigned kThreads = 256;
constexpr int kOutputs = 8;  // outputs per thread, Gibraltar's out[M] (M is the parity count there)

__constant__ LogExpTables c_tables = make_log_exp_tables();

__global__ void __launch_bounds__(kThreads) gibraltar_logexp_kernel(KernelArgs args) {
  __shared__ std::uint16_t sh_log[256];
  __shared__ std::uint8_t sh_exp[1024];
  for (unsigned t = threadIdx.x; t < 256; t += kThreads) sh_log[t] = c_tables.log[t];
  for (unsigned t = threadIdx.x; t < 1024; t += kThreads) sh_exp[t] = c_tables.exp[t];
  __syncthreads();

  const KernelProblem p = block_problem(args, blockIdx.z);
  const std::size_t col = (std::size_t{blockIdx.x} * kThreads + threadIdx.x) * 4;
  if (col >= p.len) return;
  for (std::size_t i0 = std::size_t{blockIdx.y} * kOutputs; i0 < p.m; i0 += std::size_t{gridDim.y} * kOutputs) {
    std::uint32_t out[kOutputs] = {};
    for (std::size_t j = 0; j < p.k; ++j) {
      const std::uint32_t in = load_word(p.src + j * p.src_pitch, col, p.len);
#pragma unroll
      for (int r = 0; r < kOutputs; ++r) {
        const std::size_t i = i0 + r;
        const unsigned f_log = sh_log[i < p.m ? __ldg(p.coefs + i * p.coef_pitch + j) : 0];
#pragma unroll
        for (int b = 0; b < 4; ++b) out[r] ^= std::uint32_t{sh_exp[f_log + sh_log[(in >> (8 * b)) & 0xFFu]]} << (8 * b);
      }
    }
#pragma unroll
    for (int r = 0; r < kOutputs; ++r)
      if (i0 + r < p.m) store_word(p.dst + (i0 + r) * p.dst_pitch, col, p.len, out[r], args.accumulate);
  }
}

}  // namespace

void launch_gibraltar_logexp(const KernelArgs& args, cudaStream_t stream) {
  const std::size_t words = (args.max_len + 3) / 4;
  const std::size_t tiles = (args.max_m + kOutputs - 1) / kOutputs;
  const dim3 grid(static_cast<unsigned>((words + kThreads - 1) / kThreads),
                  static_cast<unsigned>(tiles < kMaxGridYZ ? tiles : kMaxGridYZ), args.count);
  gibraltar_logexp_kernel<<<grid, kThreads, 0, stream>>>(args);
  gpu::check_launch("gibraltar_logexp");
}

}  // namespace ncast::bench::baselines
