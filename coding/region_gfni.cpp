// AVX-512 + GFNI kernels: one gf2p8affineqb per 64 source bytes per coefficient.
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "coding/region_blocking.hpp"
#include "coding/region_coef_tables.hpp"
#include "coding/region_levels.hpp"

namespace ncast::gf::detail {
namespace {

constexpr std::size_t kVec = 64;
// Outputs kept in registers per pass over a chunk: 2 × 8 accumulators of 32 zmm.
constexpr std::size_t kGroup = 8;

__mmask64 tail_mask(std::size_t n) { return n >= 64 ? ~__mmask64{0} : (__mmask64{1} << n) - 1; }

__m512i times(__m512i x, std::uint64_t matrix) {
  return _mm512_gf2p8affine_epi64_epi8(x, _mm512_set1_epi64(static_cast<long long>(matrix)), 0);
}

void mul(std::uint8_t* dst, const std::uint8_t* src, std::uint8_t c, std::size_t len) {
  const __m512i a = _mm512_set1_epi64(static_cast<long long>(kAffineMatrix[c]));
  std::size_t i = 0;
  for (; i + kVec <= len; i += kVec)
    _mm512_storeu_si512(dst + i, _mm512_gf2p8affine_epi64_epi8(_mm512_loadu_si512(src + i), a, 0));
  if (i < len) {
    const __mmask64 k = tail_mask(len - i);
    _mm512_mask_storeu_epi8(dst + i, k, _mm512_gf2p8affine_epi64_epi8(_mm512_maskz_loadu_epi8(k, src + i), a, 0));
  }
}

void mul_add(std::uint8_t* dst, const std::uint8_t* src, std::uint8_t c, std::size_t len) {
  if (c == 0) return;
  const __m512i a = _mm512_set1_epi64(static_cast<long long>(kAffineMatrix[c]));
  std::size_t i = 0;
  for (; i + kVec <= len; i += kVec) {
    const __m512i p = _mm512_gf2p8affine_epi64_epi8(_mm512_loadu_si512(src + i), a, 0);
    _mm512_storeu_si512(dst + i, _mm512_xor_si512(_mm512_loadu_si512(dst + i), p));
  }
  if (i < len) {
    const __mmask64 k = tail_mask(len - i);
    const __m512i p = _mm512_gf2p8affine_epi64_epi8(_mm512_maskz_loadu_epi8(k, src + i), a, 0);
    _mm512_mask_storeu_epi8(dst + i, k, _mm512_xor_si512(_mm512_maskz_loadu_epi8(k, dst + i), p));
  }
}

// acc ^ a ^ b in one instruction. Folding two products into an accumulator per vpternlogq, not one per
// vpxord, leaves the affine unit the only bound: on Zen 4, 16 products took 16 cycles against 22.
__m512i xor3(__m512i acc, __m512i a, __m512i b) { return _mm512_ternarylogic_epi64(acc, a, b, 0x96); }

// The line at p fetched into the level prefetch_plan (region_blocking.hpp) chose, or nothing. Inlined by
// force, as is its caller: GCC took an out-of-line function holding only a prefetch for one without
// effects and dropped the calls to it.
template <Fetch F>
[[gnu::always_inline]] inline void prefetch_line(const std::uint8_t* p) {
  if constexpr (F == Fetch::into_l1) _mm_prefetch(reinterpret_cast<const char*>(p), _MM_HINT_T0);
  else if constexpr (F == Fetch::into_l2) _mm_prefetch(reinterpret_cast<const char*>(p), _MM_HINT_T1);
}

// The V lines of a step of V vectors from src, fetched ahead of use (src already `distance` ahead).
template <Fetch F, std::size_t V>
[[gnu::always_inline]] inline void prefetch_lines(const std::uint8_t* src) {
  for (std::size_t v = 0; v < V; ++v) prefetch_line<F>(src + v * kVec);
}

// Where a group kernel finds the matrix of source s for its output g: among the constants expanded for
// a group of G (expand_by_group's layout, source-major) ...
template <std::size_t G>
struct ExpandedMats {
  const std::uint64_t* mats;
  std::uint64_t at(std::size_t s, std::size_t g) const { return mats[s * G + g]; }
};

// ... or in the table, by coefficient (rows of k), for calls too short to repay expanding.
struct TableMats {
  const std::uint8_t* coefs;
  std::size_t k;
  std::uint64_t at(std::size_t s, std::size_t g) const { return kAffineMatrix[coefs[g * k + s]]; }
};

// Byte b of c's matrix (kAffineMatrix[c]) is a linear function of c, so gf2p8affineqb computes it for 64
// coefficients at once with the matrix returned here for b: bit j of that byte is bit 7-b of c·x^j, and
// row j (byte 7-j) selects the bits m of c that feed it.
consteval std::array<std::uint64_t, 8> make_matrix_byte_maps() {
  std::array<std::uint64_t, 8> out{};
  for (unsigned b = 0; b < 8; ++b)
    for (unsigned j = 0; j < 8; ++j) {
      std::uint64_t row = 0;
      for (unsigned m = 0; m < 8; ++m)
        if ((gf::mul(static_cast<std::uint8_t>(1u << m), static_cast<std::uint8_t>(1u << j)) >> (7 - b)) & 1u)
          row |= 1u << m;
      out[b] |= row << (8 * (7 - j));
    }
  return out;
}
inline constexpr std::array<std::uint64_t, 8> kMatrixByteMaps = make_matrix_byte_maps();

// Where expand_matrices_8 takes coefficient t of a step from (byte 8g + j: row g, source j): its unpack
// network leaves the matrix of coefficient t at qword 8q + 2L + h of the output, t = 16L + 2q + h, and
// that qword must be the matrix of source q, row 2L + h.
consteval std::array<std::uint8_t, 64> make_expand_order() {
  std::array<std::uint8_t, 64> out{};
  for (unsigned t = 0; t < 64; ++t) out[t] = static_cast<std::uint8_t>(8 * (2 * (t / 16) + t % 2) + (t % 16) / 2);
  return out;
}
inline constexpr std::array<std::uint8_t, 64> kExpandOrder = make_expand_order();

// The matrices of a group of 8 outputs (rows: 8 rows of k coefficients), source-major, 64 a step: the 8
// bytes of all 64 matrices from 8 affine products, then a byte transpose. Table lookups took two
// cycles a coefficient, and matrices new to every call are common: the RLNC decoder's products, a
// server's bursts of new symbol ids. On Zen 5 at 1 KiB symbols (n=128, 3 runs alternating) bursts of 16
// new ids (`ncast-bench rlnc --op stream`) went from 3.02-3.10 to 3.16-3.30 GB/s, the decode from
// 1.77-1.81 to 1.82-1.87.
void expand_matrices_8(std::uint64_t* out, const std::uint8_t* rows, std::size_t k) {
  // The zero-masking forms with every lane selected: GCC 12's unmasked ones pass an undefined vector
  // through and draw -Wmaybe-uninitialized.
  constexpr __mmask8 kAll8 = 0xFF;
  constexpr __mmask16 kAll16 = 0xFFFF;
  constexpr __mmask32 kAll32 = ~__mmask32{0};
  constexpr __mmask64 kAll64 = ~__mmask64{0};
  const __m512i row_starts =
      _mm512_setr_epi64(0, static_cast<long long>(k), static_cast<long long>(2 * k), static_cast<long long>(3 * k),
                        static_cast<long long>(4 * k), static_cast<long long>(5 * k), static_cast<long long>(6 * k),
                        static_cast<long long>(7 * k));
  const __m512i order = _mm512_loadu_si512(kExpandOrder.data());
  std::size_t s = 0;
  for (; s + 8 <= k; s += 8, out += 64) {
    const __m512i gathered = _mm512_mask_i64gather_epi64(_mm512_setzero_si512(), kAll8, row_starts, rows + s, 1);
    const __m512i c = _mm512_maskz_permutexvar_epi8(kAll64, order, gathered);
    __m512i d[8];
    for (std::size_t b = 0; b < 8; ++b)
      d[b] = _mm512_gf2p8affine_epi64_epi8(c, _mm512_set1_epi64(static_cast<long long>(kMatrixByteMaps[b])), 0);
    __m512i w[8], q[8];
    for (std::size_t i = 0; i < 4; ++i) {
      w[2 * i] = _mm512_maskz_unpacklo_epi8(kAll64, d[2 * i], d[2 * i + 1]);
      w[2 * i + 1] = _mm512_maskz_unpackhi_epi8(kAll64, d[2 * i], d[2 * i + 1]);
    }
    for (std::size_t i = 0; i < 2; ++i)
      for (std::size_t half = 0; half < 2; ++half) {
        q[4 * i + 2 * half] = _mm512_maskz_unpacklo_epi16(kAll32, w[4 * i + half], w[4 * i + 2 + half]);
        q[4 * i + 2 * half + 1] = _mm512_maskz_unpackhi_epi16(kAll32, w[4 * i + half], w[4 * i + 2 + half]);
      }
    for (std::size_t i = 0; i < 4; ++i) {
      _mm512_storeu_si512(out + 16 * i, _mm512_maskz_unpacklo_epi32(kAll16, q[i], q[4 + i]));
      _mm512_storeu_si512(out + 16 * i + 8, _mm512_maskz_unpackhi_epi32(kAll16, q[i], q[4 + i]));
    }
  }
  for (; s < k; ++s, out += 8)
    for (std::size_t g = 0; g < 8; ++g) out[g] = kAffineMatrix[rows[g * k + s]];
}

// The general kernel's matrices: one per coefficient, groups of 8 expanded together.
struct AffineMatrices {
  std::uint64_t operator()(std::uint8_t c) const { return kAffineMatrix[c]; }
  void group_of_8(std::uint64_t* block, const std::uint8_t* rows, std::size_t k) const {
    expand_matrices_8(block, rows, k);
  }
};

// One step of 2 vectors (so each broadcast matrix serves 128 bytes) for G outputs at column pos. Sources
// are taken in pairs for xor3. Inlined by force: with the resident kernels beside it GCC kept it out of
// line, a call per step, and 32+8 at 4 KiB fell from 60 to 45 GB/s on Zen 5. An accumulating step reads
// its outputs last, just before storing them: read first, their lines left L1 while the sources streamed
// through (rows 4 KiB apart share one L1 set), and the stores missed: the RLNC decoder's updates of its
// settled rows, the accumulating calls that matter, are of that layout.
template <std::size_t G, bool Acc, Fetch F, bool Stream, class Mats>
[[gnu::always_inline]] inline void dot_step(std::uint8_t* const* dsts, const std::uint8_t* const* srcs, std::size_t k,
                                            Mats mats, std::size_t pos, std::size_t distance) {
  __m512i a[G], b[G];
  for (std::size_t g = 0; g < G; ++g) a[g] = b[g] = _mm512_setzero_si512();
  std::size_t s = 0;
  for (; s + 2 <= k; s += 2) {
    const __m512i x0 = _mm512_loadu_si512(srcs[s] + pos), y0 = _mm512_loadu_si512(srcs[s] + pos + kVec);
    const __m512i x1 = _mm512_loadu_si512(srcs[s + 1] + pos), y1 = _mm512_loadu_si512(srcs[s + 1] + pos + kVec);
    prefetch_lines<F, 2>(srcs[s] + pos + distance);
    prefetch_lines<F, 2>(srcs[s + 1] + pos + distance);
    for (std::size_t g = 0; g < G; ++g) {
      const __m512i m0 = _mm512_set1_epi64(static_cast<long long>(mats.at(s, g)));
      const __m512i m1 = _mm512_set1_epi64(static_cast<long long>(mats.at(s + 1, g)));
      a[g] = xor3(a[g], _mm512_gf2p8affine_epi64_epi8(x0, m0, 0), _mm512_gf2p8affine_epi64_epi8(x1, m1, 0));
      b[g] = xor3(b[g], _mm512_gf2p8affine_epi64_epi8(y0, m0, 0), _mm512_gf2p8affine_epi64_epi8(y1, m1, 0));
    }
  }
  if (s < k) {
    const __m512i x = _mm512_loadu_si512(srcs[s] + pos), y = _mm512_loadu_si512(srcs[s] + pos + kVec);
    prefetch_lines<F, 2>(srcs[s] + pos + distance);
    for (std::size_t g = 0; g < G; ++g) {
      a[g] = _mm512_xor_si512(a[g], times(x, mats.at(s, g)));
      b[g] = _mm512_xor_si512(b[g], times(y, mats.at(s, g)));
    }
  }
  for (std::size_t g = 0; g < G; ++g) {
    if constexpr (Acc) {
      a[g] = _mm512_xor_si512(a[g], _mm512_loadu_si512(dsts[g] + pos));
      b[g] = _mm512_xor_si512(b[g], _mm512_loadu_si512(dsts[g] + pos + kVec));
    }
    if constexpr (Stream) {
      _mm512_stream_si512(reinterpret_cast<__m512i*>(dsts[g] + pos), a[g]);
      _mm512_stream_si512(reinterpret_cast<__m512i*>(dsts[g] + pos + kVec), b[g]);
    } else {
      _mm512_storeu_si512(dsts[g] + pos, a[g]);
      _mm512_storeu_si512(dsts[g] + pos + kVec, b[g]);
    }
  }
}

// G outputs over columns [off, off + n) of k sources: whole steps, then vectors under a byte mask.
template <std::size_t G, bool Acc, Fetch F, bool Stream, class Mats>
void dot_columns(std::uint8_t* const* group_dsts, const std::uint8_t* const* srcs, std::size_t k, Mats mats,
                 std::size_t off, std::size_t n, std::size_t distance = 0) {
  std::uint8_t* dsts[G];  // a local copy, so the compiler need not reload them after every store
  std::copy_n(group_dsts, G, dsts);
  const std::size_t end = off + n;
  std::size_t pos = off;
  for (; pos + 2 * kVec <= end; pos += 2 * kVec) dot_step<G, Acc, F, Stream>(dsts, srcs, k, mats, pos, distance);
  for (; pos < end; pos += kVec) {
    const __mmask64 km = tail_mask(end - pos);
    __m512i a[G];
    for (std::size_t g = 0; g < G; ++g)
      a[g] = Acc ? _mm512_maskz_loadu_epi8(km, dsts[g] + pos) : _mm512_setzero_si512();
    for (std::size_t s = 0; s < k; ++s) {
      const __m512i x = _mm512_maskz_loadu_epi8(km, srcs[s] + pos);
      for (std::size_t g = 0; g < G; ++g) a[g] = _mm512_xor_si512(a[g], times(x, mats.at(s, g)));
    }
    for (std::size_t g = 0; g < G; ++g) _mm512_mask_storeu_epi8(dsts[g] + pos, km, a[g]);
  }
}

template <std::size_t G, bool Acc, Fetch F, bool Stream>
void dot_group(std::uint8_t* const* dsts, const std::uint8_t* const* srcs, std::size_t k, const std::uint64_t* mats,
               std::size_t off, std::size_t n, std::size_t distance) {
  dot_columns<G, Acc, F, Stream>(dsts, srcs, k, ExpandedMats<G>{mats}, off, n, distance);
}

// G outputs of a short call, their matrices looked up by coefficient (coefs: G rows of k).
template <std::size_t G, bool Acc>
void dot_group_from_table(std::uint8_t* const* dsts, const std::uint8_t* const* srcs, std::size_t k,
                          const std::uint8_t* coefs, std::size_t len) {
  dot_columns<G, Acc, Fetch::none, false>(dsts, srcs, k, TableMats{coefs, k}, 0, len);
}

using TableGroupFn = void (*)(std::uint8_t* const*, const std::uint8_t* const*, std::size_t, const std::uint8_t*,
                              std::size_t);
template <bool Acc>
constexpr TableGroupFn kTableGroupFns[kGroup + 1] = {nullptr,
                                                     dot_group_from_table<1, Acc>,
                                                     dot_group_from_table<2, Acc>,
                                                     dot_group_from_table<3, Acc>,
                                                     dot_group_from_table<4, Acc>,
                                                     dot_group_from_table<5, Acc>,
                                                     dot_group_from_table<6, Acc>,
                                                     dot_group_from_table<7, Acc>,
                                                     dot_group_from_table<8, Acc>};

// Calls of at most this many columns look their matrices up rather than expand them: a step then loads
// one coefficient byte more per product, while expanding (comparing the matrix with the thread's cached
// one, copying it, storing a vector per coefficient) cost about as much as the multiplies of the RLNC
// decoder's row operations on coefficient rows (a new matrix each, at most 256 columns). Whole
// progressive decodes on the AMD VM got 4 % (n=128, 4 KiB symbols) to 9 % (n=64, 1200 B) faster.
constexpr std::size_t kTableMaxLen = 256;

void dot_multi_from_table(std::uint8_t* const* dsts, std::size_t m, const std::uint8_t* const* srcs, std::size_t k,
                          const std::uint8_t* coefs, std::size_t len, bool accumulate) {
  const TableGroupFn* fns = accumulate ? kTableGroupFns<true> : kTableGroupFns<false>;
  const std::size_t group = balanced_group(m, kGroup);
  for (std::size_t g0 = 0; g0 < m; g0 += group) {
    const std::size_t gs = std::min(group, m - g0);
    fns[gs](dsts + g0, srcs, k, coefs + g0 * k, len);
  }
}

// Calls whose whole matrix fits in the 32 registers beside the accumulators (4+2, 6+3, 8+3 and their
// reconstructions) keep it there for the whole call. The general kernel broadcasts each matrix from memory
// at every step, a load per two products, and on Zen 5 those loads, not the affine units, bounded it:
// 8+3 at 64 KiB 98 GB/s against 172 with the matrices in registers, 6+3 88 against 157, 4+2 123
// against 147 (ISA-L 2.32.1: 105, 106, 118).
constexpr std::size_t kRegisters = 32;

// Vectors per step for K sources and G outputs with the K·G matrices resident: as many as leave room for
// the G·V accumulators, a pair of sources (2V) and the two products a pair makes; 0 when none fit.
constexpr std::size_t resident_vectors(std::size_t k, std::size_t g) {
  for (const std::size_t v : {4, 2, 1})
    if (k * g + g * v + 2 * v + 2 <= kRegisters) return v;
  return 0;
}

// Sources a resident kernel is instantiated for at most (one output: 16 of the 28 that would fit).
constexpr std::size_t kResidentMaxSources = 16;

// The parts of a resident kernel's step of V vectors at column pos, inlined by force so that the
// matrices and accumulators they share stay in registers. The first source's products start the
// accumulators (no zeroing, a 1/K fewer xors; accumulating calls add the outputs in) ...
template <std::size_t K, std::size_t G, std::size_t V, bool Acc, Fetch F>
[[gnu::always_inline]] inline void start_accumulators(__m512i (&acc)[G][V], const __m512i (&mat)[K][G],
                                                      std::uint8_t* const* dsts, const std::uint8_t* const* srcs,
                                                      std::size_t pos, std::size_t distance) {
  __m512i x[V];
  for (std::size_t v = 0; v < V; ++v) x[v] = _mm512_loadu_si512(srcs[0] + pos + v * kVec);
  prefetch_lines<F, V>(srcs[0] + pos + distance);
  for (std::size_t g = 0; g < G; ++g)
    for (std::size_t v = 0; v < V; ++v) {
      acc[g][v] = _mm512_gf2p8affine_epi64_epi8(x[v], mat[0][g], 0);
      if constexpr (Acc) acc[g][v] = _mm512_xor_si512(acc[g][v], _mm512_loadu_si512(dsts[g] + pos + v * kVec));
    }
}

// ... the other sources go in pairs through xor3, an odd one last ...
template <std::size_t K, std::size_t G, std::size_t V, Fetch F>
[[gnu::always_inline]] inline void add_sources(__m512i (&acc)[G][V], const __m512i (&mat)[K][G],
                                               const std::uint8_t* const* srcs, std::size_t pos, std::size_t distance) {
  std::size_t s = 1;
  for (; s + 2 <= K; s += 2) {
    __m512i x[V], y[V];
    for (std::size_t v = 0; v < V; ++v) {
      x[v] = _mm512_loadu_si512(srcs[s] + pos + v * kVec);
      y[v] = _mm512_loadu_si512(srcs[s + 1] + pos + v * kVec);
    }
    prefetch_lines<F, V>(srcs[s] + pos + distance);
    prefetch_lines<F, V>(srcs[s + 1] + pos + distance);
    for (std::size_t g = 0; g < G; ++g)
      for (std::size_t v = 0; v < V; ++v)
        acc[g][v] = xor3(acc[g][v], _mm512_gf2p8affine_epi64_epi8(x[v], mat[s][g], 0),
                         _mm512_gf2p8affine_epi64_epi8(y[v], mat[s + 1][g], 0));
  }
  if (s < K) {
    __m512i x[V];
    for (std::size_t v = 0; v < V; ++v) x[v] = _mm512_loadu_si512(srcs[s] + pos + v * kVec);
    prefetch_lines<F, V>(srcs[s] + pos + distance);
    for (std::size_t g = 0; g < G; ++g)
      for (std::size_t v = 0; v < V; ++v)
        acc[g][v] = _mm512_xor_si512(acc[g][v], _mm512_gf2p8affine_epi64_epi8(x[v], mat[s][g], 0));
  }
}

// ... and the accumulators are stored, streamed past the caches where Stream says so.
template <std::size_t G, std::size_t V, bool Stream>
[[gnu::always_inline]] inline void store_accumulators(const __m512i (&acc)[G][V], std::uint8_t* const* dsts,
                                                      std::size_t pos) {
  for (std::size_t g = 0; g < G; ++g)
    for (std::size_t v = 0; v < V; ++v) {
      if constexpr (Stream) _mm512_stream_si512(reinterpret_cast<__m512i*>(dsts[g] + pos + v * kVec), acc[g][v]);
      else _mm512_storeu_si512(dsts[g] + pos + v * kVec, acc[g][v]);
    }
}

// K sources into G outputs over columns [off, off + n), mats as expand_by_group lays them out for one
// group of G; the columns short of a whole step take the general kernel's tail.
template <std::size_t K, std::size_t G, bool Acc, Fetch F, bool Stream>
void dot_resident(std::uint8_t* const* group_dsts, const std::uint8_t* const* group_srcs, const std::uint64_t* mats,
                  std::size_t off, std::size_t n, std::size_t distance) {
  constexpr std::size_t V = resident_vectors(K, G);
  __m512i mat[K][G];
  for (std::size_t s = 0; s < K; ++s)
    for (std::size_t g = 0; g < G; ++g) mat[s][g] = _mm512_set1_epi64(static_cast<long long>(mats[s * G + g]));
  std::uint8_t* dsts[G];
  const std::uint8_t* srcs[K];
  std::copy_n(group_dsts, G, dsts);
  std::copy_n(group_srcs, K, srcs);
  const std::size_t end = off + n;
  std::size_t pos = off;
  for (; pos + V * kVec <= end; pos += V * kVec) {
    __m512i acc[G][V];
    start_accumulators<K, G, V, Acc, F>(acc, mat, dsts, srcs, pos, distance);
    add_sources<K, G, V, F>(acc, mat, srcs, pos, distance);
    store_accumulators<G, V, Stream>(acc, dsts, pos);
  }
  if (pos < end) dot_columns<G, Acc, Fetch::none, false>(dsts, srcs, K, ExpandedMats<G>{mats}, pos, end - pos);
}

using ResidentFn = void (*)(std::uint8_t* const*, const std::uint8_t* const*, const std::uint64_t*, std::size_t,
                            std::size_t, std::size_t);

// The resident kernel for k sources and G outputs, nullptr where the matrix does not fit.
template <std::size_t G, bool Acc, Fetch F, bool Stream, std::size_t K = 1>
ResidentFn resident_for(std::size_t k) {
  if constexpr (K > kResidentMaxSources || resident_vectors(K, G) == 0) return nullptr;
  else return k == K ? dot_resident<K, G, Acc, F, Stream> : resident_for<G, Acc, F, Stream, K + 1>(k);
}

template <bool Acc, Fetch F, bool Stream>
ResidentFn resident_for(std::size_t k, std::size_t m) {
  switch (m) {
    case 1: return resident_for<1, Acc, F, Stream>(k);
    case 2: return resident_for<2, Acc, F, Stream>(k);
    case 3: return resident_for<3, Acc, F, Stream>(k);
    case 4: return resident_for<4, Acc, F, Stream>(k);
    case 5: return resident_for<5, Acc, F, Stream>(k);
    case 6: return resident_for<6, Acc, F, Stream>(k);
    case 7: return resident_for<7, Acc, F, Stream>(k);
    case 8: return resident_for<8, Acc, F, Stream>(k);
    default: return nullptr;
  }
}

// Accumulating (never streamed), streaming or plain stores.
template <Fetch F>
ResidentFn resident_for(std::size_t k, std::size_t m, bool accumulate, bool stream) {
  if (accumulate) return resident_for<true, F, false>(k, m);
  return stream ? resident_for<false, F, true>(k, m) : resident_for<false, F, false>(k, m);
}

// Resident kernels prefetch into L1 where the plan says so and not at all otherwise: a plan that
// prefetches into L2 (more streams than the hardware prefetchers follow, on CPUs other than Zen 5) keeps
// the general kernel, as measured.
ResidentFn resident_kernel(std::size_t k, std::size_t m, bool accumulate, bool stream, Fetch fetch) {
  switch (fetch) {
    case Fetch::into_l2: return nullptr;
    case Fetch::into_l1: return resident_for<Fetch::into_l1>(k, m, accumulate, stream);
    case Fetch::none: break;
  }
  return resident_for<Fetch::none>(k, m, accumulate, stream);
}

using GroupFn = void (*)(std::uint8_t* const*, const std::uint8_t* const*, std::size_t, const std::uint64_t*,
                         std::size_t, std::size_t, std::size_t);
template <bool Acc, Fetch F, bool Stream>
constexpr GroupFn kGroupFns[kGroup + 1] = {nullptr,
                                           dot_group<1, Acc, F, Stream>,
                                           dot_group<2, Acc, F, Stream>,
                                           dot_group<3, Acc, F, Stream>,
                                           dot_group<4, Acc, F, Stream>,
                                           dot_group<5, Acc, F, Stream>,
                                           dot_group<6, Acc, F, Stream>,
                                           dot_group<7, Acc, F, Stream>,
                                           dot_group<8, Acc, F, Stream>};

// The group kernels for one call: accumulating (never streamed), streaming or plain stores, prefetching or not.
template <Fetch F>
const GroupFn* group_fns(bool accumulate, bool stream) {
  if (accumulate) return kGroupFns<true, F, false>;
  return stream ? kGroupFns<false, F, true> : kGroupFns<false, F, false>;
}

const GroupFn* group_fns(Fetch fetch, bool accumulate, bool stream) {
  switch (fetch) {
    case Fetch::into_l2: return group_fns<Fetch::into_l2>(accumulate, stream);
    case Fetch::into_l1: return group_fns<Fetch::into_l1>(accumulate, stream);
    case Fetch::none: break;
  }
  return group_fns<Fetch::none>(accumulate, stream);
}

// Calls of a few outputs whose matrix does not fit in registers run as blocks of sources that do, each
// block after the first accumulating into a column chunk of the outputs that is still in L1. Measured
// on Zen 5 against the general kernel (GB/s, ISA-L 2.32.1 beside): at 4 KiB 10+4 91 -> 111-122 (80),
// 12+4 92 -> 107-109 (79), 16+4 97 -> 108-110 (81), 17+3 105 -> 124-126 (105); at 1 MiB, two blocks,
// 10+4 59-63 -> 63-65 (54-57), 12+4 59-60 -> 61-63 (40-41); but between half of L2 and twice L2, where
// the general kernel prefetches, it won (64 KiB: 10+4 96-100 against 88-91, 12+4 94-98 against 82-85),
// as it did for three blocks beyond (1 MiB 16+4 and 17+3). On the Xeon blocks lost (ratio to ISA-L over
// 3 runs: 10+4 at 64 KiB 1.03-1.07 against 1.21-1.23, 12+4 at 4 KiB 1.07-1.11 against 1.17-1.44): Zen 5
// only.
constexpr std::size_t kBlockedMaxOutputs = 4;
constexpr std::size_t kBlockedMaxSources = 32;
constexpr std::size_t kBlockedMaxBlocksBeyondL2 = 2;  // beyond twice L2

// Sources per block for G outputs: the most whose matrices stay resident.
constexpr std::size_t block_sources(std::size_t g) {
  std::size_t k = 1;
  while (k < kResidentMaxSources && resident_vectors(k + 1, g) != 0) ++k;
  return k;
}

// Columns per chunk: the chunk of G outputs takes at most half of L1.
inline std::size_t blocked_chunk(std::size_t g) {
  static const std::size_t l1 = std::max<std::size_t>(cpu_caches().l1d, 32 * 1024);
  return std::max<std::size_t>(l1 / 2 / g / 1024 * 1024, 1024);
}

// Runs the call as blocks where that pays (returns false, doing nothing, otherwise).
bool dot_blocked(std::uint8_t* const* dsts, std::size_t m, const std::uint8_t* const* srcs, std::size_t k,
                 const std::uint64_t* mats, std::size_t len, bool accumulate, const PrefetchPlan& plan) {
  if (!zen5() || m > kBlockedMaxOutputs || k > kBlockedMaxSources || plan.fetch == Fetch::into_l2) return false;
  const std::size_t most = block_sources(m);
  const std::size_t blocks = (k + most - 1) / most, per = (k + blocks - 1) / blocks;
  if (prefetch_pays(k, m, len) && (blocks > kBlockedMaxBlocksBeyondL2 || (k + m) * len <= 2 * l2_bytes())) return false;
  std::array<ResidentFn, kBlockedMaxSources> kernels{};  // one per block, looked up once a call
  for (std::size_t b = 0, s0 = 0; s0 < k; ++b, s0 += per)
    kernels[b] = resident_kernel(std::min(per, k - s0), m, accumulate || s0 > 0, false, plan.fetch);
  const std::size_t chunk = blocked_chunk(m);
  for (std::size_t off = 0; off < len; off += chunk) {
    const std::size_t n = std::min(chunk, len - off);
    for (std::size_t b = 0, s0 = 0; s0 < k; ++b, s0 += per)
      kernels[b](dsts, srcs + s0, mats + s0 * m, off, n, plan.distance);
  }
  return true;
}

void dot_multi(std::uint8_t* const* dsts, std::size_t m, const std::uint8_t* const* srcs, std::size_t k,
               const std::uint8_t* coefs, std::size_t len, bool accumulate) {
  if (trivial_dot_multi(dsts, m, k, len, accumulate)) return;
  if (len <= kTableMaxLen) return dot_multi_from_table(dsts, m, srcs, k, coefs, len, accumulate);
  thread_local ExpansionCache<std::uint64_t> cache;
  const std::uint64_t* mats = expand_cached(cache, coefs, m, k, kGroup, AffineMatrices{});
  const PrefetchPlan plan = prefetch_plan(k, m, len, kGroup);
  const bool stream = streaming_pays(dsts, m, len, accumulate, kVec, streaming_min_bytes());
  const bool resident_streams = resident_kernels_stream() && streaming_pays(dsts, m, len, accumulate, kVec, l2_bytes());
  if (!stream || resident_streams)
    if (const ResidentFn resident = resident_kernel(k, m, accumulate, resident_streams, plan.fetch)) {
      resident(dsts, srcs, mats, 0, len, plan.distance);
      if (resident_streams) _mm_sfence();  // streaming stores are weakly ordered; publish them before returning
      return;
    }
  if (!stream && dot_blocked(dsts, m, srcs, k, mats, len, accumulate, plan)) return;
  const GroupFn* fns = group_fns(plan.fetch, accumulate, stream);
  // One group over one chunk, the narrow codes on short regions, goes straight to its kernel: there the
  // block loop's bookkeeping was a tenth of a 4 KiB 4+2 encode.
  if (m <= kGroup && len <= column_chunk(k)) fns[m](dsts, srcs, k, mats, 0, len, plan.distance);
  else
    for_each_block(m, k, len, kGroup, [&](std::size_t g0, std::size_t gs, std::size_t off, std::size_t n) {
      fns[gs](dsts + g0, srcs, k, mats + g0 * k, off, n, plan.distance);
    });
  if (stream) _mm_sfence();  // streaming stores are weakly ordered; publish them before returning
}

void dot(std::uint8_t* dst, const std::uint8_t* const* srcs, const std::uint8_t* coefs, std::size_t k,
         std::size_t len) {
  dot_multi(&dst, 1, srcs, k, coefs, len, false);
}

}  // namespace

const RegionKernels kAvx512GfniKernels{Level::avx512_gfni, mul, mul_add, dot, dot_multi};

}  // namespace ncast::gf::detail
