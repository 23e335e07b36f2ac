// AVX2 + GFNI kernels, for CPUs with GFNI but no AVX-512 (Intel's E-core servers, client parts since
// Alder Lake): one vgf2p8affineqb per 32 source bytes per coefficient, where PSHUFB needs two lookups,
// two shifts and masks.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "coding/region_blocking.hpp"
#include "coding/region_coef_tables.hpp"
#include "coding/region_levels.hpp"

namespace ncast::gf::detail {
namespace {

constexpr std::size_t kVec = 32;
// Outputs kept in registers per pass: 2 × 6 accumulators, two source vectors and a matrix fill the 16 ymm.
constexpr std::size_t kGroup = 6;

__m256i load(const std::uint8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
void store(std::uint8_t* p, __m256i v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); }
__m256i matrix_of(std::uint8_t c) { return _mm256_set1_epi64x(static_cast<long long>(kAffineMatrix[c])); }

__m256i times(__m256i x, __m256i matrix) { return _mm256_gf2p8affine_epi64_epi8(x, matrix, 0); }

void mul(std::uint8_t* dst, const std::uint8_t* src, std::uint8_t c, std::size_t len) {
  const __m256i a = matrix_of(c);
  std::size_t i = 0;
  for (; i + kVec <= len; i += kVec) store(dst + i, times(load(src + i), a));
  const std::uint8_t* row = mul_row(c);
  for (; i < len; ++i) dst[i] = row[src[i]];
}

void mul_add(std::uint8_t* dst, const std::uint8_t* src, std::uint8_t c, std::size_t len) {
  if (c == 0) return;
  const __m256i a = matrix_of(c);
  std::size_t i = 0;
  for (; i + kVec <= len; i += kVec) store(dst + i, _mm256_xor_si256(load(dst + i), times(load(src + i), a)));
  const std::uint8_t* row = mul_row(c);
  for (; i < len; ++i) dst[i] ^= row[src[i]];
}

// Where a group kernel finds the matrix of source s for its output g: among those expanded for a group
// of G (source-major) ... Expanded matrices are kept as 8 bytes and broadcast into a register: kept as
// whole vectors, they became memory operands of both of a step's affines, and the loads (6 per source
// of a 2-output step where 4 do) held 4+2 to 0.77x ISA-L's AVX2+GFNI kernel on Zen 4.
template <std::size_t G>
struct ExpandedMats {
  const std::uint64_t* mats;
  __m256i at(std::size_t s, std::size_t g) const { return _mm256_set1_epi64x(static_cast<long long>(mats[s * G + g])); }
};

// ... or in the table, by coefficient (rows of k), for calls too short to repay expanding.
struct TableMats {
  const std::uint8_t* coefs;
  std::size_t k;
  __m256i at(std::size_t s, std::size_t g) const { return matrix_of(coefs[g * k + s]); }
};

// Vectors per step for G outputs: as many as the 16 ymm registers hold beside the G × V accumulators,
// the V source vectors and a matrix, so that each matrix broadcast serves as many bytes as it can
// (ISA-L's 2-output kernel takes 96 bytes a step; 64 held ncast's 4+2 to 0.9x of it).
constexpr std::size_t vectors_per_step(std::size_t g) { return g <= 2 ? 4 : g == 3 ? 3 : 2; }

// Wider steps pay while few sources are read. With more, a step that touches two lines of every source
// lost to one line a step on Zen 4 (per call: 17+3 at 64 KiB and 1 MiB 5-15 %, 8+3 at 1 MiB 5 %, where
// 6+3 gained 4-6 % at 4 KiB to 1 MiB), so those take 2 vectors, one line, a step.
constexpr std::size_t kWideStepMaxSources = 6;

// G outputs, V vectors each, at column pos; k ≥ 1. Inlined by force: GCC kept the wider steps out of
// line, and a call per step cost more than the wider step gained. The first source's products start
// the accumulators rather than being xored into zeros: with affine and xor sharing the vector pipes,
// a fourth fewer xors made 4+2 faster than ISA-L's kernel, which zeroes them (on Zen 4).
template <std::size_t G, std::size_t V, class Mats>
[[gnu::always_inline]] inline void dot_step(std::uint8_t* const* dsts, const std::uint8_t* const* srcs, std::size_t k,
                                            Mats mats, std::size_t pos, bool accumulate) {
  __m256i acc[G][V];
  {
    __m256i x[V];
    for (std::size_t v = 0; v < V; ++v) x[v] = load(srcs[0] + pos + v * kVec);
    for (std::size_t g = 0; g < G; ++g) {
      const __m256i matrix = mats.at(0, g);
      for (std::size_t v = 0; v < V; ++v) acc[g][v] = times(x[v], matrix);
    }
  }
  if (accumulate)
    for (std::size_t g = 0; g < G; ++g)
      for (std::size_t v = 0; v < V; ++v) acc[g][v] = _mm256_xor_si256(acc[g][v], load(dsts[g] + pos + v * kVec));
  for (std::size_t s = 1; s < k; ++s) {
    __m256i x[V];
    for (std::size_t v = 0; v < V; ++v) x[v] = load(srcs[s] + pos + v * kVec);
    for (std::size_t g = 0; g < G; ++g) {
      const __m256i matrix = mats.at(s, g);
      for (std::size_t v = 0; v < V; ++v) acc[g][v] = _mm256_xor_si256(acc[g][v], times(x[v], matrix));
    }
  }
  for (std::size_t g = 0; g < G; ++g)
    for (std::size_t v = 0; v < V; ++v) store(dsts[g] + pos + v * kVec, acc[g][v]);
}

// G outputs over columns [off, off + n) of k sources; coefs (row stride k) serves the scalar tail.
template <std::size_t G, class Mats>
void dot_columns(std::uint8_t* const* group_dsts, const std::uint8_t* const* srcs, std::size_t k, Mats mats,
                 const std::uint8_t* coefs, std::size_t off, std::size_t n, bool accumulate) {
  constexpr std::size_t V = vectors_per_step(G);
  std::uint8_t* dsts[G];  // a local copy, so the compiler need not reload them after every store
  std::copy_n(group_dsts, G, dsts);
  const std::size_t end = off + n;
  std::size_t pos = off;
  if (k <= kWideStepMaxSources)
    for (; pos + V * kVec <= end; pos += V * kVec) dot_step<G, V>(dsts, srcs, k, mats, pos, accumulate);
  for (; pos + 2 * kVec <= end; pos += 2 * kVec) dot_step<G, 2>(dsts, srcs, k, mats, pos, accumulate);
  for (; pos + kVec <= end; pos += kVec) dot_step<G, 1>(dsts, srcs, k, mats, pos, accumulate);
  dot_tail(dsts, G, srcs, k, coefs, pos, end, accumulate);
}

template <std::size_t G>
void dot_group(std::uint8_t* const* dsts, const std::uint8_t* const* srcs, std::size_t k, const std::uint64_t* mats,
               const std::uint8_t* coefs, std::size_t off, std::size_t n, bool accumulate) {
  dot_columns<G>(dsts, srcs, k, ExpandedMats<G>{mats}, coefs, off, n, accumulate);
}

template <std::size_t G>
void dot_group_from_table(std::uint8_t* const* dsts, const std::uint8_t* const* srcs, std::size_t k,
                          const std::uint8_t* coefs, std::size_t len, bool accumulate) {
  dot_columns<G>(dsts, srcs, k, TableMats{coefs, k}, coefs, 0, len, accumulate);
}

using GroupFn = void (*)(std::uint8_t* const*, const std::uint8_t* const*, std::size_t, const std::uint64_t*,
                         const std::uint8_t*, std::size_t, std::size_t, bool);
constexpr GroupFn kGroupFns[kGroup + 1] = {nullptr,      dot_group<1>, dot_group<2>, dot_group<3>,
                                           dot_group<4>, dot_group<5>, dot_group<6>};
using TableGroupFn = void (*)(std::uint8_t* const*, const std::uint8_t* const*, std::size_t, const std::uint8_t*,
                              std::size_t, bool);
constexpr TableGroupFn kTableGroupFns[kGroup + 1] = {nullptr,
                                                     dot_group_from_table<1>,
                                                     dot_group_from_table<2>,
                                                     dot_group_from_table<3>,
                                                     dot_group_from_table<4>,
                                                     dot_group_from_table<5>,
                                                     dot_group_from_table<6>};

// Calls of at most this many columns look their matrices up rather than expand them, as the AVX-512
// level does (region_gfni.cpp says why).
constexpr std::size_t kTableMaxLen = 256;

void dot_multi_from_table(std::uint8_t* const* dsts, std::size_t m, const std::uint8_t* const* srcs, std::size_t k,
                          const std::uint8_t* coefs, std::size_t len, bool accumulate) {
  const std::size_t group = balanced_group(m, kGroup);
  for (std::size_t g0 = 0; g0 < m; g0 += group) {
    const std::size_t gs = std::min(group, m - g0);
    kTableGroupFns[gs](dsts + g0, srcs, k, coefs + g0 * k, len, accumulate);
  }
}

void dot_multi(std::uint8_t* const* dsts, std::size_t m, const std::uint8_t* const* srcs, std::size_t k,
               const std::uint8_t* coefs, std::size_t len, bool accumulate) {
  if (trivial_dot_multi(dsts, m, k, len, accumulate)) return;
  if (len <= kTableMaxLen) return dot_multi_from_table(dsts, m, srcs, k, coefs, len, accumulate);
  thread_local ExpansionCache<std::uint64_t> cache;
  const std::uint64_t* mats =
      expand_cached(cache, coefs, m, k, kGroup, [](std::uint8_t c) { return kAffineMatrix[c]; });
  for_each_block(m, k, len, kGroup, [&](std::size_t g0, std::size_t gs, std::size_t off, std::size_t n) {
    kGroupFns[gs](dsts + g0, srcs, k, mats + g0 * k, coefs + g0 * k, off, n, accumulate);
  });
}

void dot(std::uint8_t* dst, const std::uint8_t* const* srcs, const std::uint8_t* coefs, std::size_t k,
         std::size_t len) {
  dot_multi(&dst, 1, srcs, k, coefs, len, false);
}

}  // namespace

const RegionKernels kAvx2GfniKernels{Level::avx2_gfni, mul, mul_add, dot, dot_multi};

}  // namespace ncast::gf::detail
