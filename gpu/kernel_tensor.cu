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
// A block expands the coefficients of its O outputs once into B (shared memory, the layout the
// wgmma descriptors read: 8-row × 16-byte core matrices, K-adjacent ones 128 bytes apart and
// M/N-adjacent ones 256), then each of its warpgroups works on passes of 64·TC positions: the
// warpgroup transposes its positions of the sources into A (bytes of a position side by side, by
// PRMT 4×4 byte transposes on the way from global to shared memory), then for each group of J
// outputs issues TC·ks wgmmas (TC position tiles × ks steps of 32 sources) and packs the low bits
// of the accumulators into bytes. The warpgroups sync only among themselves (named barriers), so
// one packs while the other's wgmmas run.
//
// Column order of B (the N = 8J bit columns of a group) puts all 8 bits of an output in one thread:
// a thread holds columns 8g + 2q + e (q = lane % 4), so column (g, q, e) is output q + 4·(g / 4),
// bit 2·(g % 4) + e. Row order of A puts consecutive positions in one thread: a thread holds rows
// 16w + 8h + a of each tile T, so tile T's row (w, h, a) is position (8w + a)·2TC + 2T + h. A
// thread then owns 2TC consecutive bytes of J/4 outputs: whole words, stored straight to global.
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

__device__ inline void warpgroup_barrier(unsigned wg) {
  asm volatile("bar.sync %0, 128;" ::"r"(1 + wg) : "memory");
}
// Ordinary shared-memory stores become visible to the tensor cores (the async proxy).
__device__ inline void fence_async_shared() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }

// Keeps the compiler from moving accumulator registers across the wgmma fence and wait (it would
// otherwise copy them and make every wgmma wait for the one before).
template <int TC, int A>
__device__ inline void fence_operands(std::uint32_t (&d)[TC][A]) {
#pragma unroll
  for (int T = 0; T < TC; ++T)
#pragma unroll
    for (int i = 0; i < A; ++i) asm volatile("" : "+r"(d[T][i])::"memory");
}

// Byte t of each of the 64-bit rows r0..r3 (the low word when t < 4, lo* holds it) as one word.
__device__ inline std::uint32_t gather_row(std::uint32_t x0, std::uint32_t x1, std::uint32_t x2, std::uint32_t x3,
                                           unsigned t) {
  const unsigned sel = (t & 3) | ((4 + (t & 3)) << 4);
  return __byte_perm(__byte_perm(x0, x1, sel), __byte_perm(x2, x3, sel), 0x5410);
}

// The words of a run of 2TC bytes of one output, xor-ed into what is there when accumulate.
template <int TC>
__device__ inline void store_run(std::uint8_t* row, std::size_t col, std::size_t len, const std::uint32_t (&w)[TC / 2],
                                 bool accumulate) {
  if (col + 2 * TC <= len) {
    if constexpr (TC == 8) {
      auto* p = reinterpret_cast<uint4*>(row + col);
      uint4 v = make_uint4(w[0], w[1], w[2], w[3]);
      if (accumulate) {
        const uint4 o = *p;
        v.x ^= o.x, v.y ^= o.y, v.z ^= o.z, v.w ^= o.w;
      }
      *p = v;
    } else if constexpr (TC == 4) {
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
  for (int u = 0; u < TC / 2; ++u)
    if (col + 4 * u < len) store_word(row, col + 4 * u, len, w[u], accumulate);
}

// Sources [k_first, k_first + 32·ks) at positions [pos0, pos0 + 64·TC) into the warpgroup's A tiles:
// tile (s, T) holds sources 32s.. of the positions of tile T (row order above). Sources past k and
// positions past len are zeros. Work items are 4 sources × 16 positions: four 16-byte loads, four
// 4×4 byte transposes, sixteen 4-byte stores.
template <int TC>
__device__ void load_sources(const KernelProblem& p, std::size_t k_first, int ks, std::size_t pos0, std::uint8_t* tiles,
                             unsigned wtid) {
  constexpr int kSixteens = 64 * TC / 16;
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
        for (int u = 0; u < 4; ++u) w[r][u] = source < p.k && col + 4 * u < p.len ? load_word(row, col + 4 * u, p.len) : 0u;
      }
    }
    const std::uint32_t s = quad / 8, byte = (quad % 8) * 4;
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      // Four positions × four sources: o[k] holds position 4u + k, sources in byte order.
      const std::uint32_t t0 = __byte_perm(w[0][u], w[1][u], 0x5140), t1 = __byte_perm(w[2][u], w[3][u], 0x5140);
      const std::uint32_t t2 = __byte_perm(w[0][u], w[1][u], 0x7362), t3 = __byte_perm(w[2][u], w[3][u], 0x7362);
      const std::uint32_t o[4] = {__byte_perm(t0, t1, 0x5410), __byte_perm(t0, t1, 0x7632),
                                  __byte_perm(t2, t3, 0x5410), __byte_perm(t2, t3, 0x7632)};
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const std::uint32_t lp = 16 * sixteen + 4 * u + k;  // position within the pass
        const std::uint32_t run = lp / (2 * TC), v = lp % (2 * TC);
        const std::uint32_t row = 16 * (run / 8) + 8 * (v % 2) + run % 8, tile = s * TC + v / 2;
        *reinterpret_cast<std::uint32_t*>(tiles + tile * kTile + tile_offset(row, byte)) = o[k];
      }
    }
  }
}

// The coefficients of outputs [i0, i0 + J·groups) over sources [k_first, k_first + 32·ks) as bit
// matrix rows: group G, step s is an N × 32-byte operand at coef + (G·ks + s)·N·32, column (g, q, e)
// the row of output q + 4·(g/4), bit 2·(g%4) + e. Outputs past m and sources past k are zero rows.
template <int J>
__device__ void expand_coefficients(const KernelProblem& p, std::size_t i0, std::size_t k_first, int ks, int groups,
                                    std::uint8_t* coef, const uint2* rows) {
  constexpr int N = 8 * J;
  const int items = groups * J * ks * 8;  // (group, output, step, 4 sources)
  for (int item = static_cast<int>(threadIdx.x); item < items; item += blockDim.x) {
    const int quad = item % (ks * 8), jj = (item / (ks * 8)) % J, G = item / (ks * 8 * J);
    const std::size_t out = i0 + static_cast<std::size_t>(G) * J + jj;
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
      const std::uint32_t word = t < 4 ? gather_row(r[0].x, r[1].x, r[2].x, r[3].x, t)
                                       : gather_row(r[0].y, r[1].y, r[2].y, r[3].y, t);
      *reinterpret_cast<std::uint32_t*>(op + tile_offset(column, byte)) = word;
    }
  }
}

// Packs the low bits of the accumulators of one group into output bytes and stores them.
template <int J, int TC>
__device__ void store_group(const KernelProblem& p, std::uint32_t (&d)[TC][4 * J], std::size_t first_output,
                            std::size_t col, bool accumulate, unsigned q) {
#pragma unroll
  for (int gq = 0; gq < J / 4; ++gq) {
    const std::size_t out = first_output + 4 * gq + q;
    std::uint32_t w[TC / 2];
#pragma unroll
    for (int u = 0; u < TC / 2; ++u) {
      // Word u: positions 4u .. 4u+3 of the run are tiles 2u, 2u+1, rows h = 0, 1.
      std::uint32_t y[8];  // y[t]: bit 0 of each byte is bit t of that position's output byte
#pragma unroll
      for (int t = 0; t < 8; ++t) {
        const int i = 4 * (4 * gq + t / 2) + t % 2;  // accumulator of column (g, q, e), row half 0
        const std::uint32_t lo = __byte_perm(d[2 * u][i], d[2 * u][i + 2], 0x0040);
        const std::uint32_t hi = __byte_perm(d[2 * u + 1][i], d[2 * u + 1][i + 2], 0x0040);
        y[t] = __byte_perm(lo, hi, 0x5410) & 0x01010101u;
      }
      // A tree of shift-adds (disjoint bits, so + is |): seven operations, three deep.
      const std::uint32_t y01 = (y[1] << 1) + y[0], y23 = (y[3] << 1) + y[2];
      const std::uint32_t y45 = (y[5] << 1) + y[4], y67 = (y[7] << 1) + y[6];
      w[u] = (((y67 << 2) + y45) << 4) + (y23 << 2) + y01;
    }
    if (out < p.m) store_run<TC>(p.dst + out * p.dst_pitch, col, p.len, w, accumulate);
  }
}

template <int J, int TC, int WG>
__global__ void __launch_bounds__(WG * 128, 1)
    tensor_kernel(KernelArgs args, std::size_t k_first, int ks_max, int groups_max) {
  constexpr int N = 8 * J;
  constexpr int kPass = 64 * TC;
  extern __shared__ __align__(128) std::uint8_t smem[];
  const KernelProblem p = block_problem(args, blockIdx.z);
  if (p.m == 0 || (k_first > 0 && p.k <= k_first)) return;  // skipped, or no sources in this slice
  const std::size_t slice = p.k > k_first ? p.k - k_first : 0;
  const int ks = slice == 0 ? 1 : static_cast<int>(((slice < kTensorMaxSources ? slice : kTensorMaxSources) + 31) / 32);
  const bool accumulate = args.accumulate || k_first > 0;
  const std::size_t outputs_per_block = static_cast<std::size_t>(J) * groups_max;

  std::uint8_t* coef = smem;
  std::uint8_t* data = smem + static_cast<std::size_t>(groups_max) * ks_max * N * 32;
  const unsigned tid = threadIdx.x, wg = tid / 128, wtid = tid % 128, warp = wtid / 32, lane = tid % 32;
  std::uint8_t* tiles = data + wg * static_cast<std::size_t>(ks_max) * TC * kTile;
  const std::uint32_t tiles_address = static_cast<std::uint32_t>(__cvta_generic_to_shared(tiles));
  const std::uint32_t coef_address = static_cast<std::uint32_t>(__cvta_generic_to_shared(coef));
  // This thread's run of 2TC positions within a pass.
  const std::size_t run = (8 * warp + lane / 4) * 2 * TC;

  std::uint32_t d[TC][4 * J];
#pragma unroll
  for (int T = 0; T < TC; ++T)
#pragma unroll
    for (int i = 0; i < 4 * J; ++i) d[T][i] = 0;

  for (std::size_t i0 = std::size_t{blockIdx.y} * outputs_per_block; i0 < p.m;
       i0 += std::size_t{gridDim.y} * outputs_per_block) {
    const std::size_t left = (p.m - i0 + J - 1) / J;
    const int groups = left < static_cast<std::size_t>(groups_max) ? static_cast<int>(left) : groups_max;
    __syncthreads();  // the previous output block is done with every buffer
    auto* rows = reinterpret_cast<uint2*>(data);  // the bit-matrix rows of all 256 values, for the expansion
    for (unsigned c = tid; c < 256; c += WG * 128)
      rows[c] = make_uint2(static_cast<std::uint32_t>(c_rows.rows[c]), static_cast<std::uint32_t>(c_rows.rows[c] >> 32));
    __syncthreads();
    expand_coefficients<J>(p, i0, k_first, ks, groups, coef, rows);
    fence_async_shared();
    __syncthreads();

    for (std::size_t pos0 = (std::size_t{blockIdx.x} * WG + wg) * kPass; pos0 < p.len;
         pos0 += std::size_t{gridDim.x} * WG * kPass) {
      warpgroup_barrier(wg);  // every warp's wgmmas of the last pass have completed
      load_sources<TC>(p, k_first, ks, pos0, tiles, wtid);
      fence_async_shared();
      warpgroup_barrier(wg);
      for (int G = 0; G < groups; ++G) {
        fence_operands<TC, 4 * J>(d);
        asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
        for (int s = 0; s < ks; ++s) {
          const std::uint64_t b = descriptor(coef_address + (G * ks + s) * N * 32);
#pragma unroll
          for (int T = 0; T < TC; ++T) mma<N>(d[T], descriptor(tiles_address + (s * TC + T) * kTile), b, s);
        }
        asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
        asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
        fence_operands<TC, 4 * J>(d);
        if (pos0 + run < p.len)
          store_group<J, TC>(p, d, i0 + static_cast<std::size_t>(G) * J, pos0 + run, accumulate, lane % 4);
      }
    }
  }
}

template <int J, int TC, int WG>
std::size_t shared_bytes(int ks, int groups) {
  return static_cast<std::size_t>(groups) * ks * 8 * J * 32 + static_cast<std::size_t>(WG) * ks * TC * kTile;
}

template <int J, int TC, int WG>
bool image_present() {
  cudaFuncAttributes attributes;
  const cudaError_t err = cudaFuncGetAttributes(&attributes, tensor_kernel<J, TC, WG>);
  if (err != cudaSuccess) cudaGetLastError();  // not sticky; leave no error behind for the next check
  return err == cudaSuccess;
}

// How many blocks share the passes of one product's output block. One block runs per SM (WG·128
// threads of 128 registers fill the register file), so blocks run in waves of `sms`, and a block
// lasts as long as its warpgroups' share of the passes, rounded up, plus the expansion of its
// coefficients (about a quarter of a pass). The split that finishes soonest, the fewest blocks of
// equal ones: at m=16384, L=4096 that is 128 blocks of 8 passes a warpgroup, where "two blocks
// per SM" gave 384 of 3 or 2 (9.75 pass times against 8.25; measured on the H100, n=128
// 322 -> 405 GB/s and n=32 573 -> 674).
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

template <int J, int TC, int WG>
void launch_shape(const KernelArgs& args, std::size_t max_k, cudaStream_t stream) {
  const auto kernel = tensor_kernel<J, TC, WG>;
  int device = 0, sms = 0;
  check(cudaGetDevice(&device), "reading the current device");
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "reading the SM count");
  const std::size_t want_groups = (args.max_m + J - 1) / J;
  // Products of more than kTensorMaxSources sources go in slices, the later ones accumulating.
  for (std::size_t k_first = 0; k_first == 0 || k_first < max_k; k_first += kTensorMaxSources) {
    const std::size_t slice = std::min<std::size_t>(max_k - k_first, kTensorMaxSources);
    const int ks = slice == 0 ? 1 : static_cast<int>((slice + 31) / 32);
    int groups = static_cast<int>(std::min<std::size_t>(want_groups, kMaxOutputs / J));
    while (groups > 1 && shared_bytes<J, TC, WG>(ks, groups) > kSharedLimit) --groups;
    const std::size_t bytes = std::max<std::size_t>(shared_bytes<J, TC, WG>(ks, groups), 2048);  // the expansion's row table
    check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)),
          "allowing the tensor kernel its shared memory");
    const std::size_t blocks_m = (args.max_m + static_cast<std::size_t>(J) * groups - 1) / (static_cast<std::size_t>(J) * groups);
    const std::size_t passes = (args.max_len + 64 * TC - 1) / (64 * TC);
    const std::size_t others = std::min<std::size_t>(blocks_m, kMaxGridYZ) * args.count;
    const std::size_t along = blocks_along(passes, others, static_cast<std::size_t>(sms), WG);
    const dim3 grid(static_cast<unsigned>(along), static_cast<unsigned>(std::min<std::size_t>(blocks_m, kMaxGridYZ)),
                    args.count);
    kernel<<<grid, WG * 128, bytes, stream>>>(args, k_first, ks, groups);
    check_launch("tensor");
  }
}

}  // namespace

// Groups of 8 outputs (N = 64) and 128 positions per pass: 64 accumulators a thread, so four
// warpgroups fit and four warps per scheduler hide each other's latencies (measured: two warpgroups
// of twice the tile, or with two accumulator sets so that a warp packs one group while the next
// one's wgmmas run, were slower). Groups of 4 outputs and 256-position passes for products of at
// most 4 outputs (RS parity), which would leave half of N idle.
bool tensor_kernel_present() { return image_present<8, 2, 4>() && image_present<4, 4, 4>(); }

void launch_tensor(const KernelArgs& args, std::size_t max_k, cudaStream_t stream) {
  // Groups of 4 outputs suit RS parity (no idle columns), but their 256-position passes hold 4·ks
  // tiles per warpgroup: only up to 128 sources fit.
  if (args.max_m <= 4 && max_k <= 128) return launch_shape<4, 4, 4>(args, max_k, stream);
  launch_shape<8, 2, 4>(args, max_k, stream);
}

}  // namespace ncast::gpu::detail
