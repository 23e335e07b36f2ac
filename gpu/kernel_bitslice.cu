// The bit-sliced CUDA-core kernel (arithmetic in gpu/bitslice.hpp). Each lane owns 32 bytes of a
// 1024-byte column slab and turns a source's 32 bytes into 8 bit planes (one register transpose);
// each warp then builds a quarter of that source's table of all 256 XOR combinations of the planes
// in shared memory (one XOR and one store per entry). Multiplying by a coefficient is then one
// lookup per output plane, by the rows of its 8×8 bit matrix: the warp's 16 outputs share the lane's
// column, so every lookup index is warp-uniform and the lanes read 32 consecutive words (no bank
// conflicts). Per byte-MAC that is a quarter of a 4-byte lookup and an eighth of an XOR (two sources
// fold in per LOP3), against 1.25 ALU instructions for the PRMT split tables; the table build costs
// 256 stores per source and lane, shared by the 128 outputs of the block.
//
// Sources go through in stages of two, double-buffered: while a stage's tables are read, the next
// stage's sources and coefficients are loaded and its tables built into the other buffer, one barrier
// per stage. Outputs stay in registers as planes (16 outputs × 8 planes per lane) and go back to
// bytes by the same transpose at the end.
#include <stdexcept>

#include "gpu/bitslice.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/kernel_common.cuh"

namespace ncast::gpu::detail {
namespace {

namespace bs = bitslice;

constexpr int kWarps = 8;
constexpr unsigned kThreads = kWarps * 32;
constexpr int kRowsPerWarp = 16;
constexpr int kTileRows = kWarps * kRowsPerWarp;  // outputs per block
constexpr std::size_t kSlab = 32 * 32;            // bytes of each row per block
static_assert(kWarps == 2 * 4, "two sources per stage, a table quarter per warp");
static_assert(kTileRows * 2 == kThreads, "one coefficient per thread per stage");

// Dynamic shared memory: the bit-matrix rows of each stage's coefficients (two buffers of kTileRows
// × 2 sources) and the rows of all 256 values at its start, the tables (two buffers of two sources)
// at shared addresses [64 KiB, 192 KiB), where bs::lane_word puts them: the region is sized so that
// they fit wherever the dynamic part begins (after the 1 KiB the system reserves).
constexpr std::size_t kStageRowsOffset = 0;
constexpr std::size_t kRowTableOffset = kStageRowsOffset + 2 * kTileRows * 2 * sizeof(uint2);
constexpr std::size_t kLowBytes = kRowTableOffset + 256 * sizeof(uint2);
constexpr std::size_t kSharedBytes = bs::kTablesEnd;
static_assert(kLowBytes + 2048 <= bs::kTablesBegin);

// A table entry by its shared-memory address: the address is data, so no base is added.
__device__ inline std::uint32_t load_entry(std::uint32_t address) {
  std::uint32_t v;
  asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(address));
  return v;
}

__constant__ bs::RowTable c_row_table = bs::make_row_table();

// What a thread loads for a stage: 32 bytes of one of its two sources (warps 0-3 the first, 4-7 the
// second) and one coefficient (output tid / 2 of the tile, source tid % 2).
struct Fetched {
  std::uint32_t words[8];
  std::uint32_t coef;
};

__device__ inline void fetch(const KernelProblem& p, std::size_t j0, std::size_t i0, std::size_t col, unsigned warp,
                             unsigned tid, Fetched& f) {
  const std::size_t j = j0 + warp / 4;
  if (j < p.k && col + 32 <= p.len) {
    const auto* v = reinterpret_cast<const uint4*>(p.src + j * p.src_pitch + col);
    const uint4 a = __ldg(v), b = __ldg(v + 1);
    f.words[0] = a.x, f.words[1] = a.y, f.words[2] = a.z, f.words[3] = a.w;
    f.words[4] = b.x, f.words[5] = b.y, f.words[6] = b.z, f.words[7] = b.w;
  } else {
#pragma unroll
    for (int w = 0; w < 8; ++w) f.words[w] = j < p.k ? load_word(p.src + j * p.src_pitch, col + 4 * w, p.len) : 0u;
  }
  const std::size_t r = i0 + tid / 2, s = j0 + tid % 2;
  f.coef = (r < p.m && s < p.k) ? __ldg(p.coefs + r * p.coef_pitch + s) : 0u;
}

// Builds this warp's quarter of its source's table and stores its coefficient's rows, into buffer.
// smem_base is the shared-memory address of smem.
__device__ inline void stage_in(std::uint8_t* smem, std::uint32_t smem_base, const Fetched& f, unsigned buffer,
                                unsigned warp, unsigned lane, unsigned tid) {
  std::uint32_t planes[8];
#pragma unroll
  for (int w = 0; w < 8; ++w) planes[w] = f.words[w];
  bs::transpose(planes);
  const unsigned q = warp % 4;
  std::uint8_t* base = smem + (bs::lane_word(warp / 4, lane, buffer) - smem_base) + (q << 14);  // entry 64q
  bs::build_quarter(planes, static_cast<int>(q),
                    [&](int e, std::uint32_t v) { *reinterpret_cast<std::uint32_t*>(base + (e << 8)) = v; });
  const auto* row_table = reinterpret_cast<const uint2*>(smem + kRowTableOffset);
  auto* stage_rows = reinterpret_cast<uint2*>(smem + kStageRowsOffset);
  stage_rows[(buffer * kTileRows + tid / 2) * 2 + tid % 2] = row_table[f.coef];
}

__global__ void __launch_bounds__(kThreads, 1) bitslice_kernel(KernelArgs args) {
  extern __shared__ __align__(16) std::uint8_t smem[];
  const KernelProblem p = block_problem(args, blockIdx.z);
  const std::size_t slab = std::size_t{blockIdx.x} * kSlab;
  if (slab >= p.len) return;  // a narrower product of the batch
  const auto smem_base = static_cast<std::uint32_t>(__cvta_generic_to_shared(smem));
  if (smem_base + kLowBytes > bs::kTablesBegin) __trap();  // nothing else in this kernel uses shared memory
  const unsigned tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  auto* row_table = reinterpret_cast<uint2*>(smem + kRowTableOffset);
  for (unsigned c = tid; c < 256; c += kThreads)
    row_table[c] = make_uint2(static_cast<std::uint32_t>(c_row_table.rows[c]),
                              static_cast<std::uint32_t>(c_row_table.rows[c] >> 32));
  const auto* stage_rows = reinterpret_cast<const uint4*>(smem + kStageRowsOffset);
  const std::size_t col = slab + lane * 32;
  const std::size_t stages = (p.k + 1) / 2;

  for (std::size_t i0 = std::size_t{blockIdx.y} * kTileRows; i0 < p.m; i0 += std::size_t{gridDim.y} * kTileRows) {
    std::uint32_t acc[kRowsPerWarp][8];
#pragma unroll
    for (int r = 0; r < kRowsPerWarp; ++r)
#pragma unroll
      for (int j = 0; j < 8; ++j) acc[r][j] = 0;
    const std::size_t first_row = i0 + warp * kRowsPerWarp;

    Fetched f;
    __syncthreads();  // the row table is in place; the previous tile is done with the buffers
    if (stages > 0) {
      fetch(p, 0, i0, col, warp, tid, f);
      stage_in(smem, smem_base, f, 0, warp, lane, tid);
    }
    __syncthreads();
    for (std::size_t t = 0; t < stages; ++t) {
      const unsigned buffer = t & 1;
      const bool more = t + 1 < stages;
      if (more) fetch(p, 2 * (t + 1), i0, col, warp, tid, f);  // in flight during the lookups
      const std::uint32_t lw0 = bs::lane_word(0, lane, buffer), lw1 = bs::lane_word(1, lane, buffer);
      // Rows past m have zero coefficients (entry 0 is zero): no test per row, so the loads of
      // all 16 rows can be in flight together.
      if (first_row < p.m) {
#pragma unroll
        for (int r = 0; r < kRowsPerWarp; ++r) {
          const uint4 rows = stage_rows[buffer * kTileRows + warp * kRowsPerWarp + r];  // broadcast
#pragma unroll
          for (int j = 0; j < 8; ++j)
            acc[r][j] ^= load_entry(bs::entry_address(j < 4 ? rows.x : rows.y, lw0, j & 3)) ^
                         load_entry(bs::entry_address(j < 4 ? rows.z : rows.w, lw1, j & 3));
        }
      }
      if (more) stage_in(smem, smem_base, f, buffer ^ 1, warp, lane, tid);
      __syncthreads();
    }

    if (col >= p.len) continue;
    const bool full = col + 32 <= p.len;
#pragma unroll
    for (int r = 0; r < kRowsPerWarp; ++r) {
      if (first_row + r >= p.m) break;
      std::uint32_t w[8];
#pragma unroll
      for (int j = 0; j < 8; ++j) w[j] = acc[r][j];
      bs::transpose(w);
      std::uint8_t* row = p.dst + (first_row + r) * p.dst_pitch;
      if (full) {
        auto* v = reinterpret_cast<uint4*>(row + col);
        uint4 a = make_uint4(w[0], w[1], w[2], w[3]), b = make_uint4(w[4], w[5], w[6], w[7]);
        if (args.accumulate) {
          const uint4 oa = v[0], ob = v[1];
          a.x ^= oa.x, a.y ^= oa.y, a.z ^= oa.z, a.w ^= oa.w;
          b.x ^= ob.x, b.y ^= ob.y, b.z ^= ob.z, b.w ^= ob.w;
        }
        v[0] = a, v[1] = b;
      } else {
#pragma unroll
        for (int k = 0; k < 8; ++k) store_word(row, col + 4 * k, p.len, w[k], args.accumulate);
      }
    }
  }
}

}  // namespace

void launch_bitslice(const KernelArgs& args, cudaStream_t stream) {
  check(cudaFuncSetAttribute(bitslice_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             static_cast<int>(kSharedBytes)),
        "allowing the bitslice kernel its shared memory");
  const std::size_t tiles = (args.max_m + kTileRows - 1) / kTileRows;
  const dim3 grid(static_cast<unsigned>((args.max_len + kSlab - 1) / kSlab),
                  static_cast<unsigned>(tiles < kMaxGridYZ ? tiles : kMaxGridYZ), args.count);
  bitslice_kernel<<<grid, kThreads, kSharedBytes, stream>>>(args);
  check_launch("bitslice");
}

}  // namespace ncast::gpu::detail
