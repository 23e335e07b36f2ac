// The fast CUDA-core kernel. Multiplying by a coefficient c is linear over GF(2), so c·x splits by
// the bit fields of x: c·x = A[x & 7] ^ B[(x >> 3) & 7] ^ C[x >> 6], with A, B (8 entries each) and
// C (4 entries) the products of c with those fields. Eight one-byte entries fit in two registers, and
// PRMT (__byte_perm) looks up four bytes at once from them, so one coefficient times four data bytes
// costs three PRMT plus the XORs that fold them in: 1.25 instructions per byte-MAC, all in the
// integer pipe (docs: shared/research/gpu-limits.md, technique T5).
//
// Each thread owns `W` 4-byte words of a column range and `MT` outputs (MT·W accumulators in
// registers); the PRMT selectors of a source word are computed once and used for all MT outputs.
// The tables of MT outputs × kChunk sources live in shared memory, read as warp-wide broadcasts.
#include <stdexcept>
#include <string>

#include "gpu/cuda_check.hpp"
#include "gpu/kernel_common.cuh"

namespace ncast::gpu::detail {
namespace {

constexpr unsigned kThreads = 128;
constexpr int kChunk = 16;  // sources per table chunk; even, as sources are taken in pairs
static_assert(kChunk % 2 == 0);

// The split tables of coefficient c: ab = {A[0..3], A[4..7], B[0..3], B[4..7]}, cc = C[0..3].
__device__ inline void split_tables(std::uint32_t c, uint4& ab, std::uint32_t& cc) {
  std::uint32_t p[8];  // p[b] = c·2^b
  p[0] = c;
#pragma unroll
  for (int b = 1; b < 8; ++b) p[b] = xtime(p[b - 1]);
  // {0, x, y, x^y}: the products of c with the 2-bit values whose bits weigh x and y.
  auto four = [](std::uint32_t x, std::uint32_t y) { return (x << 8) | (y << 16) | ((x ^ y) << 24); };
  const std::uint32_t a_lo = four(p[0], p[1]), b_lo = four(p[3], p[4]);
  ab = make_uint4(a_lo, a_lo ^ (p[2] * 0x01010101u), b_lo, b_lo ^ (p[5] * 0x01010101u));
  cc = four(p[6], p[7]);
}

// PRMT selectors of the three bit fields of a data word w = [x0 x1 x2 x3]. A selector nibble picks
// one table byte, but the byte fields of w are 8 bits apart and the nibbles 4: taking bytes 0 and 1
// in place and bytes 2 and 3 shifted down by 12 bits yields the lookups in byte order [x0 x2 x1 x3],
// which the kernel undoes once per output word at the end (kUnswap).
struct Selectors {
  std::uint32_t a, b, c;
};
__device__ inline Selectors selectors(std::uint32_t w) {
  return {(w & 0x0707u) | ((w >> 12) & 0x7070u), ((w >> 3) & 0x0707u) | ((w >> 15) & 0x7070u),
          ((w >> 6) & 0x0303u) | ((w >> 18) & 0x3030u)};
}
constexpr std::uint32_t kUnswap = 0x3120;

__device__ inline std::uint32_t lookup(const uint4& ab, std::uint32_t cc, const Selectors& s) {
  return __byte_perm(ab.x, ab.y, s.a) ^ __byte_perm(ab.z, ab.w, s.b) ^ __byte_perm(cc, cc, s.c);
}

template <int W>
__device__ inline void load_words(const std::uint8_t* row, std::size_t col, std::size_t len, bool full,
                                  std::uint32_t (&w)[W]) {
  if (full) {
    if constexpr (W == 4) {
      const uint4 v = __ldg(reinterpret_cast<const uint4*>(row + col));
      w[0] = v.x, w[1] = v.y, w[2] = v.z, w[3] = v.w;
    } else if constexpr (W == 2) {
      const uint2 v = __ldg(reinterpret_cast<const uint2*>(row + col));
      w[0] = v.x, w[1] = v.y;
    } else {
#pragma unroll
      for (int i = 0; i < W; ++i) w[i] = __ldg(reinterpret_cast<const std::uint32_t*>(row + col) + i);
    }
    return;
  }
#pragma unroll
  for (int i = 0; i < W; ++i) w[i] = load_word(row, col + 4 * i, len);
}

template <int W>
__device__ inline void store_words(std::uint8_t* row, std::size_t col, std::size_t len, bool full, bool accumulate,
                                   const std::uint32_t (&w)[W]) {
  if constexpr (W == 4) {
    if (full) {
      auto* p = reinterpret_cast<uint4*>(row + col);
      uint4 v = make_uint4(w[0], w[1], w[2], w[3]);
      if (accumulate) {
        const uint4 old = *p;
        v.x ^= old.x, v.y ^= old.y, v.z ^= old.z, v.w ^= old.w;
      }
      *p = v;
      return;
    }
  } else if constexpr (W == 2) {
    if (full) {
      auto* p = reinterpret_cast<uint2*>(row + col);
      uint2 v = make_uint2(w[0], w[1]);
      if (accumulate) {
        const uint2 old = *p;
        v.x ^= old.x, v.y ^= old.y;
      }
      *p = v;
      return;
    }
  }
#pragma unroll
  for (int i = 0; i < W; ++i) store_word(row, col + 4 * i, len, w[i], accumulate);
}

// Sources j and j + 1 of the thread's columns (zero past the last source).
template <int W>
__device__ inline void load_pair(const KernelProblem& p, std::size_t j, std::size_t col, bool full,
                                 std::uint32_t (&w0)[W], std::uint32_t (&w1)[W]) {
  load_words<W>(p.src + j * p.src_pitch, col, p.len, full, w0);
  if (j + 1 < p.k) {
    load_words<W>(p.src + (j + 1) * p.src_pitch, col, p.len, full, w1);
  } else {
#pragma unroll
    for (int w = 0; w < W; ++w) w1[w] = 0;
  }
}

template <int MT, int W>
__global__ void __launch_bounds__(kThreads) prmt_kernel(KernelArgs args) {
  __shared__ uint4 tab_ab[kChunk][MT];
  __shared__ std::uint32_t tab_c[kChunk][MT];
  const KernelProblem p = block_problem(args, blockIdx.z);
  const std::size_t col = (std::size_t{blockIdx.x} * kThreads + threadIdx.x) * (4 * W);
  const bool active = col < p.len;
  const bool full = col + 4 * W <= p.len;

  for (std::size_t i0 = std::size_t{blockIdx.y} * MT; i0 < p.m; i0 += std::size_t{gridDim.y} * MT) {
    std::uint32_t acc[MT][W];
#pragma unroll
    for (int r = 0; r < MT; ++r)
#pragma unroll
      for (int w = 0; w < W; ++w) acc[r][w] = 0;

    // The words of the next pair of sources are loaded one pair ahead, so their latency hides
    // behind the arithmetic of the current pair.
    std::uint32_t w0[W], w1[W];
    if (active && p.k > 0) load_pair<W>(p, 0, col, full, w0, w1);

    for (std::size_t j0 = 0; j0 < p.k; j0 += kChunk) {
      const int jn = static_cast<int>(p.k - j0 < kChunk ? p.k - j0 : kChunk);
      __syncthreads();  // everyone is done with the previous chunk's tables
      for (unsigned t = threadIdx.x; t < kChunk * MT; t += kThreads) {
        const int jj = static_cast<int>(t / MT), r = static_cast<int>(t % MT);
        // Tables past the last source or output are zero, so the pairs below need no tests.
        const std::uint32_t c = (jj < jn && i0 + r < p.m) ? __ldg(p.coefs + (i0 + r) * p.coef_pitch + j0 + jj) : 0u;
        split_tables(c, tab_ab[jj][r], tab_c[jj][r]);
      }
      __syncthreads();
      if (!active) continue;

      for (int jj = 0; jj < jn; jj += 2) {
        Selectors s0[W], s1[W];
#pragma unroll
        for (int w = 0; w < W; ++w) s0[w] = selectors(w0[w]), s1[w] = selectors(w1[w]);
        if (j0 + jj + 2 < p.k) load_pair<W>(p, j0 + jj + 2, col, full, w0, w1);
#pragma unroll
        for (int r = 0; r < MT; ++r) {
          const uint4 ab0 = tab_ab[jj][r], ab1 = tab_ab[jj + 1][r];
          const std::uint32_t c0 = tab_c[jj][r], c1 = tab_c[jj + 1][r];
#pragma unroll
          for (int w = 0; w < W; ++w) acc[r][w] ^= lookup(ab0, c0, s0[w]) ^ lookup(ab1, c1, s1[w]);
        }
      }
    }

    if (active) {
#pragma unroll
      for (int r = 0; r < MT; ++r) {
        if (i0 + r >= p.m) break;
#pragma unroll
        for (int w = 0; w < W; ++w) acc[r][w] = __byte_perm(acc[r][w], 0, kUnswap);
        store_words<W>(p.dst + (i0 + r) * p.dst_pitch, col, p.len, full, args.accumulate, acc[r]);
      }
    }
  }
}

template <int MT, int W>
void launch(const KernelArgs& args, cudaStream_t stream) {
  const std::size_t bytes_per_block = std::size_t{kThreads} * 4 * W;
  const std::size_t tiles = (args.max_m + MT - 1) / MT;
  const dim3 grid(static_cast<unsigned>((args.max_len + bytes_per_block - 1) / bytes_per_block),
                  static_cast<unsigned>(tiles < kMaxGridYZ ? tiles : kMaxGridYZ), args.count);
  prmt_kernel<MT, W><<<grid, kThreads, 0, stream>>>(args);
  check_launch("prmt");
}

}  // namespace

void launch_prmt(const KernelArgs& args, int tile_outputs, int tile_words, cudaStream_t stream) {
  switch (tile_outputs * 100 + tile_words) {
    case 402: return launch<4, 2>(args, stream);
    case 404: return launch<4, 4>(args, stream);
    case 802: return launch<8, 2>(args, stream);
    case 804: return launch<8, 4>(args, stream);
    case 1602: return launch<16, 2>(args, stream);
    case 1604: return launch<16, 4>(args, stream);
    case 3202: return launch<32, 2>(args, stream);
    case 3204: return launch<32, 4>(args, stream);
  }
  throw std::invalid_argument("prmt: tile " + std::to_string(tile_outputs) + "x" + std::to_string(tile_words) +
                              " is not compiled in");
}

}  // namespace ncast::gpu::detail
