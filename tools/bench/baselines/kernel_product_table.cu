// The full product table: all 256×256 products (64 KiB) in shared memory, one lookup per byte
// (the row of the coefficient is the same for the whole warp, the column is the data byte). Blocks
// stay resident and loop over tiles, since building the table costs each block 64 Ki products.
// A seed-style baseline for ncast-bench.
#include "gpu/cuda_check.hpp"
#include "gpu/kernel_common.cuh"
#include "tools/bench/baselines/seed_launch.hpp"

namespace ncast::bench::baselines {

using namespace gpu::detail;  // the kernels' argument types and device helpers

namespace {

constexpr unsigned kThreads = 256;
constexpr int kOutputs = 8;
constexpr std::size_t kTableBytes = 256 * 256;

__constant__ LogExpTables c_tables = make_log_exp_tables();

__global__ void __launch_bounds__(kThreads)
    product_table_kernel(KernelArgs args, std::size_t col_blocks, std::size_t row_tiles) {
  extern __shared__ std::uint8_t table[];  // table[c * 256 + x] = c·x
  __shared__ std::uint16_t sh_log[256];
  __shared__ std::uint8_t sh_exp[1024];
  for (unsigned t = threadIdx.x; t < 256; t += kThreads) sh_log[t] = c_tables.log[t];
  for (unsigned t = threadIdx.x; t < 1024; t += kThreads) sh_exp[t] = c_tables.exp[t];
  __syncthreads();
  for (unsigned t = threadIdx.x; t < kTableBytes; t += kThreads) table[t] = sh_exp[sh_log[t >> 8] + sh_log[t & 0xFFu]];
  __syncthreads();

  const std::size_t tiles = col_blocks * row_tiles * args.count;
  for (std::size_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const std::size_t x = tile % col_blocks;
    const std::size_t y = tile / col_blocks % row_tiles;
    const KernelProblem p = block_problem(args, static_cast<unsigned>(tile / (col_blocks * row_tiles)));
    const std::size_t col = (x * kThreads + threadIdx.x) * 4;
    const std::size_t i0 = y * kOutputs;
    if (col >= p.len || i0 >= p.m) continue;
    std::uint32_t out[kOutputs] = {};
    for (std::size_t j = 0; j < p.k; ++j) {
      const std::uint32_t in = load_word(p.src + j * p.src_pitch, col, p.len);
#pragma unroll
      for (int r = 0; r < kOutputs; ++r) {
        const std::size_t i = i0 + r;
        const std::uint8_t* row = table + 256u * (i < p.m ? __ldg(p.coefs + i * p.coef_pitch + j) : 0);
#pragma unroll
        for (int b = 0; b < 4; ++b) out[r] ^= std::uint32_t{row[(in >> (8 * b)) & 0xFFu]} << (8 * b);
      }
    }
#pragma unroll
    for (int r = 0; r < kOutputs; ++r)
      if (i0 + r < p.m) store_word(p.dst + (i0 + r) * p.dst_pitch, col, p.len, out[r], args.accumulate);
  }
}

}  // namespace

void launch_product_table(const KernelArgs& args, cudaStream_t stream) {
  static_assert(kTableBytes > 48 * 1024, "needs the opt-in for more than 48 KiB of dynamic shared memory");
  gpu::check(cudaFuncSetAttribute(product_table_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kTableBytes),
             "allowing the product-table kernel 64 KiB of shared memory");
  int device = 0, sms = 0, per_sm = 0;
  gpu::check(cudaGetDevice(&device), "reading the current device");
  gpu::check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "reading the SM count");
  gpu::check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, product_table_kernel, kThreads, kTableBytes),
             "reading the product-table kernel's occupancy");
  const std::size_t col_blocks = ((args.max_len + 3) / 4 + kThreads - 1) / kThreads;
  const std::size_t row_tiles = (args.max_m + kOutputs - 1) / kOutputs;
  const std::size_t tiles = col_blocks * row_tiles * args.count;
  const std::size_t resident = static_cast<std::size_t>(sms) * static_cast<std::size_t>(per_sm > 0 ? per_sm : 1);
  const auto blocks = static_cast<unsigned>(tiles < resident ? tiles : resident);
  product_table_kernel<<<blocks, kThreads, kTableBytes, stream>>>(args, col_blocks, row_tiles);
  gpu::check_launch("product_table");
}

}  // namespace ncast::bench::baselines
