// The tensor-core kernel: D = C·S over GF(2^8) as one GF(2) matrix product on Hopper's b1 tensor
// path, `wgmma.mma_async … .s32.b1.b1.and.popc` (sm_90a only; this file is built for that target
// alone, see gpu/CMakeLists.txt).
//
// Multiplying a byte x by c is linear over GF(2): bit t of c·x is the parity of (row t of c's 8×8
// bit matrix) AND x. So output byte j at position p, bit t, is the parity of the 8n-bit AND of
//   A[p]     = the n source bytes at position p, side by side (K = source × bit), and
//   B[(j,t)] = row t of the bit matrix of every coefficient c_ji, side by side in the same order,
// i.e. the low bit of one popcount: the wgmma computes those popcounts for 64 positions × N columns
// × 256 bits (32 sources) per instruction, accumulating over the sources in s32 registers.
//
// A block expands the coefficients of its outputs once into B (shared memory, the layout the wgmma
// descriptors read: 8-row × 16-byte core matrices, K-adjacent ones 128 bytes apart and M/N-adjacent
// ones 256), then each of its warpgroups works on passes of TilesPerPass tiles of 64 positions: the
// warpgroup transposes its positions of the sources into A (bytes of a position side by side, by PRMT
// 4×4 byte transposes), then for each group of OutputsPerGroup outputs issues TilesPerPass·ks wgmmas
// (position tiles × ks steps of 32 sources) and packs the low bits of the accumulators into bytes.
// The sources reach the transpose through a ring of Stages passes in their row layout, fetched with
// cp.async several passes ahead, where shared memory has room beside the coefficients (few sources:
// RLNC n=32, RS), else straight from global memory. The warpgroups sync only among themselves (named
// barriers), so one packs while another's wgmmas run.
//
// Column order of B (the N = 8·OutputsPerGroup bit columns of a group) puts all 8 bits of an output
// in one thread: a thread holds columns 8g + 2q + e (q = lane % 4), so column (g, q, e) is output
// q + 4·(g / 4), bit 2·(g % 4) + e. Row order of A puts consecutive positions in one thread: a thread
// holds rows 16w + 8h + a of each tile T, so tile T's row (w, h, a) is position
// (8w + a)·2·TilesPerPass + 2T + h. A thread then owns 2·TilesPerPass consecutive bytes of
// OutputsPerGroup/4 outputs: whole words, stored straight to global.
#include <algorithm>
#include <cstdint>

#include "gpu/bitslice.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/kernel_common.cuh"
#include "gpu/kernel_tensor.hpp"

namespace ncast::gpu::detail {
namespace {

constexpr std::size_t kMaxOutputs = 128;  // per block: the coefficients of more would crowd out the sources
constexpr std::size_t kSharedLimit = 227 * 1024;
constexpr std::size_t kTile = 2048;  // one 64-row × 32-byte operand tile
static_assert(kTensorMaxSources % 32 == 0);

__constant__ bitslice::RowTable c_rows = bitslice::make_row_table();

// The wgmma shapes used: m64nNk256 b1, A and B from shared memory; scale 0 starts the sum.
template <int N>
__device__ void mma(std::uint32_t (&d)[N / 2], std::uint64_t a, std::uint64_t b, int scale);

#define NCAST_R4(i) "+r"(d[i]), "+r"(d[i + 1]), "+r"(d[i + 2]), "+r"(d[i + 3])
#define NCAST_R16(i) NCAST_R4(i), NCAST_R4(i + 4), NCAST_R4(i + 8), NCAST_R4(i + 12)

template <>
__device__ void mma<32>(std::uint32_t (&d)[16], std::uint64_t a, std::uint64_t b, int scale) {
  asm volatile(
      "{.reg .pred p; setp.ne.b32 p, %18, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n32k256.s32.b1.b1.and.popc "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, %16, %17, p;}\n"
      : NCAST_R16(0)
      : "l"(a), "l"(b), "r"(scale));
}

template <>
__device__ void mma<64>(std::uint32_t (&d)[32], std::uint64_t a, std::uint64_t b, int scale) {
  asm volatile(
      "{.reg .pred p; setp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k256.s32.b1.b1.and.popc "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, "
      "%22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p;}\n"
      : NCAST_R16(0), NCAST_R16(16)
      : "l"(a), "l"(b), "r"(scale));
}

#undef NCAST_R16
#undef NCAST_R4

// A shared-memory matrix descriptor without swizzling: core matrices of 8 rows × 16 bytes, the two
// of a row's 32 bytes 128 bytes apart, successive 8-row groups 256 bytes apart.
__device__ inline std::uint64_t descriptor(std::uint32_t address) {
  return std::uint64_t{(address & 0x3FFFFu) >> 4} | (std::uint64_t{128 >> 4} << 16) | (std::uint64_t{256 >> 4} << 32);
}

// Offset of byte b (0..31) of row r of an operand tile.
__host__ __device__ constexpr std::uint32_t tile_offset(std::uint32_t r, std::uint32_t b) {
  return (r / 8) * 256 + (b / 16) * 128 + (r % 8) * 16 + b % 16;
}

__device__ inline void warpgroup_barrier(unsigned wg) { asm volatile("bar.sync %0, 128;" ::"r"(1 + wg) : "memory"); }
// Ordinary shared-memory stores become visible to the tensor cores (the async proxy).
__device__ inline void fence_async_shared() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }

// Keeps the compiler from moving accumulator registers across the wgmma fence and wait (it would
// otherwise copy them and make every wgmma wait for the one before).
template <int TilesPerPass, int Accumulators>
__device__ inline void fence_operands(std::uint32_t (&d)[TilesPerPass][Accumulators]) {
#pragma unroll
  for (int T = 0; T < TilesPerPass; ++T)
#pragma unroll
    for (int i = 0; i < Accumulators; ++i) asm volatile("" : "+r"(d[T][i])::"memory");
}

// Byte t of each of the 64-bit rows r0..r3 (the low word when t < 4, lo* holds it) as one word.
__device__ inline std::uint32_t gather_row(std::uint32_t x0, std::uint32_t x1, std::uint32_t x2, std::uint32_t x3,
                                           unsigned t) {
  const unsigned sel = (t & 3) | ((4 + (t & 3)) << 4);
  return __byte_perm(__byte_perm(x0, x1, sel), __byte_perm(x2, x3, sel), 0x5410);
}

// The words of a run of 2·TilesPerPass bytes of one output, xor-ed into what is there when accumulate.
template <int TilesPerPass>
__device__ inline void store_run(std::uint8_t* row, std::size_t col, std::size_t len,
                                 const std::uint32_t (&w)[TilesPerPass / 2], bool accumulate) {
  if (col + 2 * TilesPerPass <= len) {
    if constexpr (TilesPerPass == 8) {
      auto* p = reinterpret_cast<uint4*>(row + col);
      uint4 v = make_uint4(w[0], w[1], w[2], w[3]);
      if (accumulate) {
        const uint4 o = *p;
        v.x ^= o.x, v.y ^= o.y, v.z ^= o.z, v.w ^= o.w;
      }
      *p = v;
    } else if constexpr (TilesPerPass == 4) {
      auto* p = reinterpret_cast<uint2*>(row + col);
      uint2 v = make_uint2(w[0], w[1]);
      if (accumulate) {
        const uint2 o = *p;
        v.x ^= o.x, v.y ^= o.y;
      }
      *p = v;
    } else {
      auto* p = reinterpret_cast<std::uint32_t*>(row + col);
      *p = accumulate ? *p ^ w[0] : w[0];
    }
    return;
  }
#pragma unroll
  for (int u = 0; u < TilesPerPass / 2; ++u)
    if (col + 4 * u < len) store_word(row, col + 4 * u, len, w[u], accumulate);
}

// Four sources × sixteen positions (w[r][u]: source 4·quad + r, positions 16·sixteen + 4u ..) into
// the warpgroup's A tiles: tile (s, T) holds sources 32s.. of the positions of tile T (row order
// above). Four 4×4 byte transposes (8 PRMT each), sixteen 4-byte stores.
template <int TilesPerPass>
__device__ inline void store_transposed(const std::uint32_t (&w)[4][4], int quad, int sixteen, std::uint8_t* tiles) {
  const std::uint32_t s = quad / 8, byte = (quad % 8) * 4;
#pragma unroll
  for (int u = 0; u < 4; ++u) {
    // Four positions × four sources: o[k] holds position 4u + k, sources in byte order.
    const std::uint32_t t0 = __byte_perm(w[0][u], w[1][u], 0x5140), t1 = __byte_perm(w[2][u], w[3][u], 0x5140);
    const std::uint32_t t2 = __byte_perm(w[0][u], w[1][u], 0x7362), t3 = __byte_perm(w[2][u], w[3][u], 0x7362);
    const std::uint32_t o[4] = {__byte_perm(t0, t1, 0x5410), __byte_perm(t0, t1, 0x7632), __byte_perm(t2, t3, 0x5410),
                                __byte_perm(t2, t3, 0x7632)};
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const std::uint32_t lp = 16 * sixteen + 4 * u + k;  // position within the pass
      const std::uint32_t run = lp / (2 * TilesPerPass), v = lp % (2 * TilesPerPass);
      const std::uint32_t row = 16 * (run / 8) + 8 * (v % 2) + run % 8, tile = s * TilesPerPass + v / 2;
      *reinterpret_cast<std::uint32_t*>(tiles + tile * kTile + tile_offset(row, byte)) = o[k];
    }
  }
}

// Sources [k_first, k_first + 32·ks) at positions [pos0, pos0 + 64·TilesPerPass) straight from
// global memory into the warpgroup's A tiles (sources past k and positions past len are zeros). Work
// items are 4 sources × 16 positions: four 16-byte loads, then store_transposed.
template <int TilesPerPass>
__device__ void load_sources(const KernelProblem& p, std::size_t k_first, int ks, std::size_t pos0, std::uint8_t* tiles,
                             unsigned wtid) {
  constexpr int kSixteens = 64 * TilesPerPass / 16;
  const int items = ks * 8 * kSixteens;
  for (int item = static_cast<int>(wtid); item < items; item += 128) {
    const int sixteen = item % kSixteens, quad = item / kSixteens;
    const std::size_t col = pos0 + 16 * static_cast<std::size_t>(sixteen);
    std::uint32_t w[4][4];
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const std::size_t source = k_first + 4 * static_cast<std::size_t>(quad) + r;
      const std::uint8_t* row = p.src + source * p.src_pitch;
      if (source < p.k && col + 16 <= p.len) {
        const uint4 v = __ldg(reinterpret_cast<const uint4*>(row + col));
        w[r][0] = v.x, w[r][1] = v.y, w[r][2] = v.z, w[r][3] = v.w;
      } else {
#pragma unroll
        for (int u = 0; u < 4; ++u)
          w[r][u] = source < p.k && col + 4 * u < p.len ? load_word(row, col + 4 * u, p.len) : 0u;
      }
    }
    store_transposed<TilesPerPass>(w, quad, sixteen, tiles);
  }
}

// The asynchronous way in (cp.async, no registers held while the bytes travel): a pass's sources in
// their row layout, source r of the slice at raw + r·64·TilesPerPass, positions side by side. Rows
// of sources past k are left alone (the transpose reads zeros for them); bytes past len are zeros; a
// pass at or past len is an empty copy group.
template <int TilesPerPass>
__device__ void fetch_sources(const KernelProblem& p, std::size_t k_first, int ks, std::size_t pos0, std::uint8_t* raw,
                              unsigned wtid) {
  constexpr int kRow = 64 * TilesPerPass, kChunks = kRow / 16;
  const std::size_t rows = pos0 >= p.len                                       ? 0
                           : p.k - k_first < static_cast<std::size_t>(32 * ks) ? p.k - k_first
                                                                               : 32 * ks;
  const int items = static_cast<int>(rows) * kChunks;
  for (int item = static_cast<int>(wtid); item < items; item += 128) {
    const int r = item / kChunks, chunk = item % kChunks;
    const std::size_t col = pos0 + 16 * static_cast<std::size_t>(chunk);
    std::uint8_t* dst = raw + r * kRow + 16 * chunk;
    if (col < p.len) {
      const unsigned bytes = p.len - col < 16 ? static_cast<unsigned>(p.len - col) : 16u;  // the rest zero-filled
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(
                       static_cast<std::uint32_t>(__cvta_generic_to_shared(dst))),
                   "l"(p.src + (k_first + r) * p.src_pitch + col), "r"(bytes)
                   : "memory");
    } else {
      *reinterpret_cast<uint4*>(dst) = make_uint4(0, 0, 0, 0);
    }
  }
  asm volatile("cp.async.commit_group;" ::: "memory");
}

// A pass fetched by fetch_sources, from shared memory into the A tiles.
template <int TilesPerPass>
__device__ void transpose_sources(const KernelProblem& p, std::size_t k_first, int ks, const std::uint8_t* raw,
                                  std::uint8_t* tiles, unsigned wtid) {
  constexpr int kSixteens = 64 * TilesPerPass / 16, kRow = 64 * TilesPerPass;
  const int items = ks * 8 * kSixteens;
  for (int item = static_cast<int>(wtid); item < items; item += 128) {
    const int sixteen = item % kSixteens, quad = item / kSixteens;
    std::uint32_t w[4][4];
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const int row = 4 * quad + r;
      if (k_first + row < p.k) {
        const uint4 v = *reinterpret_cast<const uint4*>(raw + row * kRow + 16 * sixteen);
        w[r][0] = v.x, w[r][1] = v.y, w[r][2] = v.z, w[r][3] = v.w;
      } else {
        w[r][0] = w[r][1] = w[r][2] = w[r][3] = 0;
      }
    }
    store_transposed<TilesPerPass>(w, quad, sixteen, tiles);
  }
}

template <int N>
__device__ inline void copy_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}

// The coefficients of outputs [i0, i0 + OutputsPerGroup·groups) over sources
// [k_first, k_first + 32·ks) as bit matrix rows: group G, step s is an N × 32-byte operand at
// coef + (G·ks + s)·N·32, column (g, q, e) the row of output q + 4·(g/4), bit 2·(g%4) + e. Outputs
// past m and sources past k are zero rows.
template <int OutputsPerGroup>
__device__ void expand_coefficients(const KernelProblem& p, std::size_t i0, std::size_t k_first, int ks, int groups,
                                    std::uint8_t* coef, const uint2* rows) {
  constexpr int N = 8 * OutputsPerGroup;
  const int items = groups * OutputsPerGroup * ks * 8;  // (group, output, step, 4 sources)
  for (int item = static_cast<int>(threadIdx.x); item < items; item += blockDim.x) {
    const int quad = item % (ks * 8), jj = (item / (ks * 8)) % OutputsPerGroup, G = item / (ks * 8 * OutputsPerGroup);
    const std::size_t out = i0 + static_cast<std::size_t>(G) * OutputsPerGroup + jj;
    uint2 r[4];
#pragma unroll
    for (int x = 0; x < 4; ++x) {
      const std::size_t source = k_first + 4 * static_cast<std::size_t>(quad) + x;
      r[x] = out < p.m && source < p.k ? rows[__ldg(p.coefs + out * p.coef_pitch + source)] : make_uint2(0, 0);
    }
    const int s = quad / 8, byte = (quad % 8) * 4, q = jj % 4, gq = jj / 4;
    std::uint8_t* op = coef + (static_cast<std::size_t>(G) * ks + s) * N * 32;
#pragma unroll
    for (unsigned t = 0; t < 8; ++t) {
      const std::uint32_t column = 8 * (4 * gq + t / 2) + 2 * q + t % 2;
      const std::uint32_t word =
          t < 4 ? gather_row(r[0].x, r[1].x, r[2].x, r[3].x, t) : gather_row(r[0].y, r[1].y, r[2].y, r[3].y, t);
      *reinterpret_cast<std::uint32_t*>(op + tile_offset(column, byte)) = word;
    }
  }
}

// Word u of output gq (positions 4u .. 4u+3 of the thread's run: tiles 2u, 2u+1, rows h = 0, 1).
// Gathering: the accumulators are popcounts below 2^16, so d_a + d_b·2^16 (one IMAD, on the FMA
// pipe) keeps both low bits, at bits 0 and 16, and one PRMT takes bytes 0 and 2 of two such sums:
// y[t], whose byte k holds in bit 0 bit t of position k's output byte (above it, other bits of the
// popcounts). Merging: three levels of shift (IMAD) and select (one LOP3 with a constant mask),
// each taking the low 1, 2, 4 clean bits of every byte from one operand and the next ones from the
// other, shifted; the bits a shift carries into the next byte fall where the mask takes the other
// operand. The sums and shifts go to the FMA pipe so that the integer pipe, which the transposes
// share, carries only the PRMT and LOP3 (docs/gpu.md counts them).
template <int OutputsPerGroup, int TilesPerPass>
__device__ inline std::uint32_t pack_word(const std::uint32_t (&d)[TilesPerPass][4 * OutputsPerGroup], int gq, int u) {
  auto select = [](std::uint32_t lo, std::uint32_t hi, std::uint32_t mask) { return (lo & mask) | (hi & ~mask); };
  std::uint32_t y[8];
#pragma unroll
  for (int t = 0; t < 8; ++t) {
    const int i = 4 * (4 * gq + t / 2) + t % 2;                           // accumulator of column (g, q, e), row half 0
    const std::uint32_t even = d[2 * u][i] + d[2 * u + 1][i] * 0x10000u;  // positions 0, 2
    const std::uint32_t odd = d[2 * u][i + 2] + d[2 * u + 1][i + 2] * 0x10000u;  // positions 1, 3
    y[t] = __byte_perm(even, odd, 0x6240);
  }
  const std::uint32_t y01 = select(y[0], y[1] * 2, 0x01010101u), y23 = select(y[2], y[3] * 2, 0x01010101u);
  const std::uint32_t y45 = select(y[4], y[5] * 2, 0x01010101u), y67 = select(y[6], y[7] * 2, 0x01010101u);
  return select(select(y01, y23 * 4, 0x03030303u), select(y45, y67 * 4, 0x03030303u) * 16, 0x0F0F0F0Fu);
}

// Packs the low bits of the accumulators of one group into output bytes and stores them: any
// group, at the edges of the outputs and of the length, and accumulating.
template <int OutputsPerGroup, int TilesPerPass>
__device__ void store_group(const KernelProblem& p, const std::uint32_t (&d)[TilesPerPass][4 * OutputsPerGroup],
                            std::size_t first_output, std::size_t col, bool accumulate, unsigned q) {
#pragma unroll
  for (int gq = 0; gq < OutputsPerGroup / 4; ++gq) {
    const std::size_t out = first_output + 4 * gq + q;
    std::uint32_t w[TilesPerPass / 2];
#pragma unroll
    for (int u = 0; u < TilesPerPass / 2; ++u) w[u] = pack_word<OutputsPerGroup, TilesPerPass>(d, gq, u);
    if (out < p.m) store_run<TilesPerPass>(p.dst + out * p.dst_pitch, col, p.len, w, accumulate);
  }
}

// The common case, a whole group inside the outputs and the length, written over: its words go
// straight to the thread's run in each of its OutputsPerGroup/4 rows, `row` the first, `pitch4`
// apart (4 outputs).
template <int OutputsPerGroup, int TilesPerPass>
__device__ inline void store_whole_group(const std::uint32_t (&d)[TilesPerPass][4 * OutputsPerGroup], std::uint8_t* row,
                                         std::size_t pitch4) {
#pragma unroll
  for (int gq = 0; gq < OutputsPerGroup / 4; ++gq) {
    std::uint32_t w[TilesPerPass / 2];
#pragma unroll
    for (int u = 0; u < TilesPerPass / 2; ++u) w[u] = pack_word<OutputsPerGroup, TilesPerPass>(d, gq, u);
    std::uint8_t* at = row + gq * pitch4;
    if constexpr (TilesPerPass == 4) *reinterpret_cast<uint2*>(at) = make_uint2(w[0], w[1]);
    else *reinterpret_cast<std::uint32_t*>(at) = w[0];
  }
}

template <int N>
__device__ inline void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}
__device__ inline void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ inline void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }

// A warpgroup's share of the passes and its buffers: its A tiles, its ring of Stages passes of
// sources in their row layout (raw, raw_stage bytes a pass), the first of its passes and the stride
// to the next one.
struct WarpgroupPasses {
  std::uint8_t* tiles;
  std::uint8_t* raw;
  std::size_t raw_stage, first, stride;
  unsigned wg, wtid;
};

// The shared-memory descriptors of the first A tile and of the first coefficient operand; the others
// are offsets of these (the address field, in 16-byte units, cannot carry: shared memory ends below
// 2^18). ks steps of 32 sources.
struct Operands {
  std::uint64_t a, b;
  int ks;
};

// The outputs a block works on at a time: from `first`, `groups` groups, the first `whole` of them
// with no output past m.
struct OutputBlock {
  std::size_t first;
  int groups, whole;
};

// The coefficients of the block's outputs, expanded into their operands once the previous output
// block is done with every buffer; data holds the bit-matrix rows of all 256 values meanwhile.
template <int OutputsPerGroup, int Warpgroups>
__device__ __forceinline__ void expand_block(const KernelProblem& p, const OutputBlock& block, std::size_t k_first,
                                             int ks, std::uint8_t* coef, std::uint8_t* data, unsigned tid) {
  __syncthreads();
  auto* rows = reinterpret_cast<uint2*>(data);
  for (unsigned c = tid; c < 256; c += Warpgroups * 128)
    rows[c] = make_uint2(static_cast<std::uint32_t>(c_rows.rows[c]), static_cast<std::uint32_t>(c_rows.rows[c] >> 32));
  __syncthreads();
  expand_coefficients<OutputsPerGroup>(p, block.first, k_first, ks, block.groups, coef, rows);
  fence_async_shared();
  __syncthreads();
}

// The wgmmas of group G over the pass's A tiles, waited for.
template <int OutputsPerGroup, int TilesPerPass>
__device__ __forceinline__ void group_products(std::uint32_t (&d)[TilesPerPass][4 * OutputsPerGroup],
                                               const Operands& operands, int G) {
  constexpr int N = 8 * OutputsPerGroup;
  fence_operands<TilesPerPass, 4 * OutputsPerGroup>(d);
  wgmma_fence();
  std::uint64_t a = operands.a, b = operands.b + static_cast<std::uint64_t>(G * operands.ks) * (N * 32 / 16);
  for (int s = 0; s < operands.ks; ++s, a += TilesPerPass * (kTile / 16), b += N * 32 / 16) {
#pragma unroll
    for (int T = 0; T < TilesPerPass; ++T) mma<N>(d[T], a + T * (kTile / 16), b, s);
  }
  wgmma_commit();
  wgmma_wait<0>();
  fence_operands<TilesPerPass, 4 * OutputsPerGroup>(d);
}

// The ring's first Stages - 1 passes (empty copy groups past len).
template <int TilesPerPass, int Stages>
__device__ __forceinline__ void prefetch_ring(const KernelProblem& p, std::size_t k_first, int ks,
                                              const WarpgroupPasses& w) {
  for (int f = 0; f < Stages - 1; ++f)
    fetch_sources<TilesPerPass>(p, k_first, ks, w.first + f * w.stride < p.len ? w.first + f * w.stride : p.len,
                                w.raw + f * w.raw_stage, w.wtid);
}

// The sources of the pass at pos0 into the warpgroup's A tiles, through the ring (stage is this
// pass's place in it) when Stages > 0, straight from global memory otherwise.
template <int TilesPerPass, int Stages>
__device__ __forceinline__ void pass_sources(const KernelProblem& p, std::size_t k_first, int ks, std::size_t pos0,
                                             const WarpgroupPasses& w, int& stage) {
  if constexpr (Stages > 0) {
    // The stage of the pass Stages - 1 ahead is the one the last pass used: every thread of the
    // warpgroup has passed the barrier after that pass's transpose.
    const std::size_t ahead = pos0 + (Stages - 1) * w.stride;
    fetch_sources<TilesPerPass>(p, k_first, ks, ahead < p.len ? ahead : p.len,
                                w.raw + ((stage + Stages - 1) % Stages) * w.raw_stage, w.wtid);
    copy_wait<Stages - 1>();
    warpgroup_barrier(w.wg);  // this pass's bytes have landed, and every warp's wgmmas of the last pass completed
    transpose_sources<TilesPerPass>(p, k_first, ks, w.raw + stage * w.raw_stage, w.tiles, w.wtid);
    stage = stage + 1 == Stages ? 0 : stage + 1;
  } else {
    warpgroup_barrier(w.wg);  // every warp's wgmmas of the last pass have completed
    load_sources<TilesPerPass>(p, k_first, ks, pos0, w.tiles, w.wtid);
  }
  fence_async_shared();
  warpgroup_barrier(w.wg);
}

// Every group of the block over the pass at pos0, this thread's run of it at pos0 + run. Groups
// wholly inside the outputs of a pass wholly inside the length, written over, take the short way out
// (store_whole_group); the rest, store_group. Two loops, so that neither the edge tests nor their
// address arithmetic sit in the common one.
template <int OutputsPerGroup, int TilesPerPass>
__device__ __forceinline__ void pass_outputs(const KernelProblem& p,
                                             std::uint32_t (&d)[TilesPerPass][4 * OutputsPerGroup],
                                             const Operands& operands, const OutputBlock& block, std::size_t pos0,
                                             std::size_t run, bool accumulate, unsigned q) {
  const int whole = !accumulate && pos0 + 64 * TilesPerPass <= p.len ? block.whole : 0;
  std::uint8_t* row = p.dst + (block.first + q) * p.dst_pitch + pos0 + run;
  int G = 0;
  for (; G < whole; ++G, row += OutputsPerGroup * p.dst_pitch) {
    group_products<OutputsPerGroup, TilesPerPass>(d, operands, G);
    store_whole_group<OutputsPerGroup, TilesPerPass>(d, row, 4 * p.dst_pitch);
  }
  for (; G < block.groups; ++G) {
    group_products<OutputsPerGroup, TilesPerPass>(d, operands, G);
    if (pos0 + run < p.len)
      store_group<OutputsPerGroup, TilesPerPass>(p, d, block.first + static_cast<std::size_t>(G) * OutputsPerGroup,
                                                 pos0 + run, accumulate, q);
  }
}

// Each block owns up to OutputsPerGroup·groups_max outputs at a time and a share of the passes;
// sources [k_first, k_first + kTensorMaxSources), ks_max steps of 32 at most.
template <int OutputsPerGroup, int TilesPerPass, int Warpgroups, int Stages>
__global__ void __launch_bounds__(Warpgroups * 128, 1)
    tensor_kernel(KernelArgs args, std::size_t k_first, int ks_max, int groups_max) {
  constexpr int kPass = 64 * TilesPerPass;
  extern __shared__ __align__(128) std::uint8_t smem[];
  const KernelProblem p = block_problem(args, blockIdx.z);
  if (p.m == 0 || (k_first > 0 && p.k <= k_first)) return;  // skipped, or no sources in this slice
  const std::size_t slice = p.k > k_first ? p.k - k_first : 0;
  const int ks = slice == 0 ? 1 : static_cast<int>(((slice < kTensorMaxSources ? slice : kTensorMaxSources) + 31) / 32);
  const bool accumulate = args.accumulate || k_first > 0;
  const std::size_t outputs_per_block = static_cast<std::size_t>(OutputsPerGroup) * groups_max;

  std::uint8_t* coef = smem;
  std::uint8_t* data = smem + static_cast<std::size_t>(groups_max) * ks_max * 8 * OutputsPerGroup * 32;
  const unsigned tid = threadIdx.x, wg = tid / 128, wtid = tid % 128, warp = wtid / 32, lane = tid % 32;
  std::uint8_t* tiles = data + wg * static_cast<std::size_t>(ks_max) * TilesPerPass * kTile;
  const std::size_t raw_stage = static_cast<std::size_t>(ks_max) * 32 * kPass;
  const WarpgroupPasses passes{
      tiles,
      data + Warpgroups * static_cast<std::size_t>(ks_max) * TilesPerPass * kTile + wg * Stages * raw_stage,
      raw_stage,
      (std::size_t{blockIdx.x} * Warpgroups + wg) * kPass,
      std::size_t{gridDim.x} * Warpgroups * kPass,
      wg,
      wtid};
  const Operands operands{descriptor(static_cast<std::uint32_t>(__cvta_generic_to_shared(tiles))),
                          descriptor(static_cast<std::uint32_t>(__cvta_generic_to_shared(coef))), ks};
  const std::size_t run = (8 * warp + lane / 4) * 2 * TilesPerPass;  // this thread's positions within a pass

  std::uint32_t d[TilesPerPass][4 * OutputsPerGroup];
#pragma unroll
  for (int T = 0; T < TilesPerPass; ++T)
#pragma unroll
    for (int i = 0; i < 4 * OutputsPerGroup; ++i) d[T][i] = 0;

  for (std::size_t i0 = std::size_t{blockIdx.y} * outputs_per_block; i0 < p.m;
       i0 += std::size_t{gridDim.y} * outputs_per_block) {
    const std::size_t left = (p.m - i0 + OutputsPerGroup - 1) / OutputsPerGroup;
    const int groups = left < static_cast<std::size_t>(groups_max) ? static_cast<int>(left) : groups_max;
    const std::size_t inside = (p.m - i0) / OutputsPerGroup;
    const OutputBlock block{i0, groups, inside < static_cast<std::size_t>(groups) ? static_cast<int>(inside) : groups};
    expand_block<OutputsPerGroup, Warpgroups>(p, block, k_first, ks, coef, data, tid);
    if constexpr (Stages > 0) prefetch_ring<TilesPerPass, Stages>(p, k_first, ks, passes);
    int stage = 0;
    for (std::size_t pos0 = passes.first; pos0 < p.len; pos0 += passes.stride) {
      pass_sources<TilesPerPass, Stages>(p, k_first, ks, pos0, passes, stage);
      pass_outputs<OutputsPerGroup, TilesPerPass>(p, d, operands, block, pos0, run, accumulate, lane % 4);
    }
    if constexpr (Stages > 0) copy_wait<0>();  // nothing left in flight into the ring (only empty groups remain)
  }
}

template <int OutputsPerGroup, int TilesPerPass, int Warpgroups, int Stages>
std::size_t shared_bytes(int ks, int groups) {
  return static_cast<std::size_t>(groups) * ks * 8 * OutputsPerGroup * 32 +
         static_cast<std::size_t>(Warpgroups) * ks * TilesPerPass * kTile +
         static_cast<std::size_t>(Warpgroups) * Stages * ks * 32 * 64 * TilesPerPass;
}

template <int OutputsPerGroup, int TilesPerPass, int Warpgroups, int Stages>
bool image_present() {
  cudaFuncAttributes attributes;
  const cudaError_t err =
      cudaFuncGetAttributes(&attributes, tensor_kernel<OutputsPerGroup, TilesPerPass, Warpgroups, Stages>);
  if (err != cudaSuccess) cudaGetLastError();  // not sticky; leave no error behind for the next check
  return err == cudaSuccess;
}

// How many blocks share the passes of one product's output block. One block runs per SM
// (Warpgroups·128 threads of 128 registers fill the register file), so blocks run in waves of `sms`,
// and a block lasts as long as its warpgroups' share of the passes, rounded up, plus the expansion of
// its coefficients (about a quarter of a pass). The split that finishes soonest, the fewest blocks of
// equal ones: fewer, longer blocks expand each coefficient fewer times and leave no half-empty last
// wave (docs/gpu.md, "Blocks").
std::size_t blocks_along(std::size_t passes, std::size_t others, std::size_t sms, std::size_t warpgroups) {
  const std::size_t most = std::min((passes + warpgroups - 1) / warpgroups, 8 * sms);
  std::size_t along = 1;
  double best = 0;
  for (std::size_t a = 1; a <= most; ++a) {
    const std::size_t waves = (a * others + sms - 1) / sms;
    const std::size_t share = (passes + a * warpgroups - 1) / (a * warpgroups);
    const double time = static_cast<double>(waves) * (static_cast<double>(share) + 0.25);
    if (a == 1 || time < best) best = time, along = a;
  }
  return along;
}

template <int OutputsPerGroup, int TilesPerPass, int Warpgroups, int Stages>
void launch_kernel(const KernelArgs& args, std::size_t k_first, int ks, int groups, cudaStream_t stream) {
  const auto kernel = tensor_kernel<OutputsPerGroup, TilesPerPass, Warpgroups, Stages>;
  int device = 0, sms = 0;
  check(cudaGetDevice(&device), "reading the current device");
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "reading the SM count");
  const std::size_t bytes = std::max<std::size_t>(
      shared_bytes<OutputsPerGroup, TilesPerPass, Warpgroups, Stages>(ks, groups), 2048);  // the expansion's row table
  check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)),
        "allowing the tensor kernel its shared memory");
  const std::size_t blocks_m = (args.max_m + static_cast<std::size_t>(OutputsPerGroup) * groups - 1) /
                               (static_cast<std::size_t>(OutputsPerGroup) * groups);
  const std::size_t passes = (args.max_len + 64 * TilesPerPass - 1) / (64 * TilesPerPass);
  const std::size_t others = std::min<std::size_t>(blocks_m, kMaxGridYZ) * args.count;
  const std::size_t along = blocks_along(passes, others, static_cast<std::size_t>(sms), Warpgroups);
  const dim3 grid(static_cast<unsigned>(along), static_cast<unsigned>(std::min<std::size_t>(blocks_m, kMaxGridYZ)),
                  args.count);
  kernel<<<grid, Warpgroups * 128, bytes, stream>>>(args, k_first, ks, groups);
  check_launch("tensor");
}

// The ring depths of the asynchronous source fetch: the deeper one where it fits beside every
// output's coefficients, else the shallower one, else none (loads straight into the A tiles).
constexpr int kDeepStages = 6, kStages = 4;

template <int OutputsPerGroup, int TilesPerPass, int Warpgroups>
void launch_shape(const KernelArgs& args, std::size_t max_k, cudaStream_t stream) {
  const std::size_t want_groups = (args.max_m + OutputsPerGroup - 1) / OutputsPerGroup;
  // Products of more than kTensorMaxSources sources go in slices, the later ones accumulating.
  for (std::size_t k_first = 0; k_first == 0 || k_first < max_k; k_first += kTensorMaxSources) {
    const std::size_t slice = std::min<std::size_t>(max_k - k_first, kTensorMaxSources);
    const int ks = slice == 0 ? 1 : static_cast<int>((slice + 31) / 32);
    int groups = static_cast<int>(std::min<std::size_t>(want_groups, kMaxOutputs / OutputsPerGroup));
    if (shared_bytes<OutputsPerGroup, TilesPerPass, Warpgroups, kDeepStages>(ks, groups) <= kSharedLimit) {
      launch_kernel<OutputsPerGroup, TilesPerPass, Warpgroups, kDeepStages>(args, k_first, ks, groups, stream);
      continue;
    }
    if (shared_bytes<OutputsPerGroup, TilesPerPass, Warpgroups, kStages>(ks, groups) <= kSharedLimit) {
      launch_kernel<OutputsPerGroup, TilesPerPass, Warpgroups, kStages>(args, k_first, ks, groups, stream);
      continue;
    }
    while (groups > 1 && shared_bytes<OutputsPerGroup, TilesPerPass, Warpgroups, 0>(ks, groups) > kSharedLimit)
      --groups;
    launch_kernel<OutputsPerGroup, TilesPerPass, Warpgroups, 0>(args, k_first, ks, groups, stream);
  }
}

}  // namespace

// Groups of 8 outputs (N = 64) and 128 positions per pass: 64 accumulators a thread, so four
// warpgroups fit and four warps per scheduler hide each other's latencies. Groups of 4 outputs and
// 256-position passes for products of at most 8 outputs (RS parity), which would otherwise leave half
// of N idle or, at 5 to 8 outputs, move half as many bytes per pass. (docs/gpu.md: the shapes tried.)
bool tensor_kernel_present() {
  return image_present<8, 2, 4, 0>() && image_present<8, 2, 4, kStages>() && image_present<8, 2, 4, kDeepStages>() &&
         image_present<4, 4, 4, 0>() && image_present<4, 4, 4, kStages>() && image_present<4, 4, 4, kDeepStages>();
}

void launch_tensor(const KernelArgs& args, std::size_t max_k, cudaStream_t stream) {
  // Groups of 4 outputs suit RS parity, but their 256-position passes hold 4·ks tiles per warpgroup:
  // only up to 128 sources fit.
  if (args.max_m <= 8 && max_k <= 128) return launch_shape<4, 4, 4>(args, max_k, stream);
  launch_shape<8, 2, 4>(args, max_k, stream);
}

}  // namespace ncast::gpu::detail
