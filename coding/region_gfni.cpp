// AVX-512 + GFNI kernels: one gf2p8affineqb per 64 source bytes per coefficient.
#include <immintrin.h>

#include <algorithm>
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

// A step's source lines fetched into L2 ahead of use, where prefetch_into_l2 (region_blocking.hpp) says so.
template <bool Prefetch>
void prefetch_step(const std::uint8_t* src) {
  if constexpr (Prefetch) {
    _mm_prefetch(reinterpret_cast<const char*>(src + kPrefetchDistance), _MM_HINT_T1);
    _mm_prefetch(reinterpret_cast<const char*>(src + kPrefetchDistance + kVec), _MM_HINT_T1);
  }
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

// One step of 2 vectors (so each broadcast matrix serves 128 bytes) for G outputs at column pos. Sources
// are taken in pairs for xor3.
template <std::size_t G, bool Acc, bool Prefetch, bool Stream, class Mats>
void dot_step(std::uint8_t* const* dsts, const std::uint8_t* const* srcs, std::size_t k, Mats mats, std::size_t pos) {
  __m512i a[G], b[G];
  for (std::size_t g = 0; g < G; ++g) {
    a[g] = Acc ? _mm512_loadu_si512(dsts[g] + pos) : _mm512_setzero_si512();
    b[g] = Acc ? _mm512_loadu_si512(dsts[g] + pos + kVec) : _mm512_setzero_si512();
  }
  std::size_t s = 0;
  for (; s + 2 <= k; s += 2) {
    const __m512i x0 = _mm512_loadu_si512(srcs[s] + pos), y0 = _mm512_loadu_si512(srcs[s] + pos + kVec);
    const __m512i x1 = _mm512_loadu_si512(srcs[s + 1] + pos), y1 = _mm512_loadu_si512(srcs[s + 1] + pos + kVec);
    prefetch_step<Prefetch>(srcs[s] + pos);
    prefetch_step<Prefetch>(srcs[s + 1] + pos);
    for (std::size_t g = 0; g < G; ++g) {
      const __m512i m0 = _mm512_set1_epi64(static_cast<long long>(mats.at(s, g)));
      const __m512i m1 = _mm512_set1_epi64(static_cast<long long>(mats.at(s + 1, g)));
      a[g] = xor3(a[g], _mm512_gf2p8affine_epi64_epi8(x0, m0, 0), _mm512_gf2p8affine_epi64_epi8(x1, m1, 0));
      b[g] = xor3(b[g], _mm512_gf2p8affine_epi64_epi8(y0, m0, 0), _mm512_gf2p8affine_epi64_epi8(y1, m1, 0));
    }
  }
  if (s < k) {
    const __m512i x = _mm512_loadu_si512(srcs[s] + pos), y = _mm512_loadu_si512(srcs[s] + pos + kVec);
    prefetch_step<Prefetch>(srcs[s] + pos);
    for (std::size_t g = 0; g < G; ++g) {
      a[g] = _mm512_xor_si512(a[g], times(x, mats.at(s, g)));
      b[g] = _mm512_xor_si512(b[g], times(y, mats.at(s, g)));
    }
  }
  for (std::size_t g = 0; g < G; ++g) {
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
template <std::size_t G, bool Acc, bool Prefetch, bool Stream, class Mats>
void dot_columns(std::uint8_t* const* group_dsts, const std::uint8_t* const* srcs, std::size_t k, Mats mats,
                 std::size_t off, std::size_t n) {
  std::uint8_t* dsts[G];  // a local copy, so the compiler need not reload them after every store
  std::copy_n(group_dsts, G, dsts);
  const std::size_t end = off + n;
  std::size_t pos = off;
  for (; pos + 2 * kVec <= end; pos += 2 * kVec) dot_step<G, Acc, Prefetch, Stream>(dsts, srcs, k, mats, pos);
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

template <std::size_t G, bool Acc, bool Prefetch, bool Stream>
void dot_group(std::uint8_t* const* dsts, const std::uint8_t* const* srcs, std::size_t k, const std::uint64_t* mats,
               std::size_t off, std::size_t n) {
  dot_columns<G, Acc, Prefetch, Stream>(dsts, srcs, k, ExpandedMats<G>{mats}, off, n);
}

// G outputs of a short call, their matrices looked up by coefficient (coefs: G rows of k).
template <std::size_t G, bool Acc>
void dot_group_from_table(std::uint8_t* const* dsts, const std::uint8_t* const* srcs, std::size_t k,
                          const std::uint8_t* coefs, std::size_t len) {
  dot_columns<G, Acc, false, false>(dsts, srcs, k, TableMats{coefs, k}, 0, len);
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

using GroupFn = void (*)(std::uint8_t* const*, const std::uint8_t* const*, std::size_t, const std::uint64_t*,
                         std::size_t, std::size_t);
template <bool Acc, bool Prefetch, bool Stream>
constexpr GroupFn kGroupFns[kGroup + 1] = {nullptr,
                                           dot_group<1, Acc, Prefetch, Stream>,
                                           dot_group<2, Acc, Prefetch, Stream>,
                                           dot_group<3, Acc, Prefetch, Stream>,
                                           dot_group<4, Acc, Prefetch, Stream>,
                                           dot_group<5, Acc, Prefetch, Stream>,
                                           dot_group<6, Acc, Prefetch, Stream>,
                                           dot_group<7, Acc, Prefetch, Stream>,
                                           dot_group<8, Acc, Prefetch, Stream>};

// The group kernels for one call: accumulating (never streamed), streaming or plain stores, prefetching or not.
template <bool Prefetch>
const GroupFn* group_fns(bool accumulate, bool stream) {
  if (accumulate) return kGroupFns<true, Prefetch, false>;
  return stream ? kGroupFns<false, Prefetch, true> : kGroupFns<false, Prefetch, false>;
}

const GroupFn* group_fns(bool prefetch, bool accumulate, bool stream) {
  return prefetch ? group_fns<true>(accumulate, stream) : group_fns<false>(accumulate, stream);
}

void dot_multi(std::uint8_t* const* dsts, std::size_t m, const std::uint8_t* const* srcs, std::size_t k,
               const std::uint8_t* coefs, std::size_t len, bool accumulate) {
  if (trivial_dot_multi(dsts, m, k, len, accumulate)) return;
  if (len <= kTableMaxLen) return dot_multi_from_table(dsts, m, srcs, k, coefs, len, accumulate);
  thread_local ExpansionCache<std::uint64_t> cache;
  const std::uint64_t* mats =
      expand_cached(cache, coefs, m, k, kGroup, [](std::uint8_t c) { return kAffineMatrix[c]; });
  const bool stream = streaming_pays(dsts, m, len, accumulate, kVec);
  const GroupFn* fns = group_fns(prefetch_into_l2(k, m, len), accumulate, stream);
  // One group over one chunk, the narrow codes on short regions, goes straight to its kernel: there the
  // block loop's bookkeeping was a tenth of a 4 KiB 4+2 encode.
  if (m <= kGroup && len <= column_chunk(k)) fns[m](dsts, srcs, k, mats, 0, len);
  else
    for_each_block(m, k, len, kGroup, [&](std::size_t g0, std::size_t gs, std::size_t off, std::size_t n) {
      fns[gs](dsts + g0, srcs, k, mats + g0 * k, off, n);
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
