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

// A matrix broadcast to a whole vector, ready to be an operand of vgf2p8affineqb.
struct Matrix {
  __m256i v;
};
Matrix expand(std::uint8_t c) { return {matrix_of(c)}; }
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
// of G (source-major) ...
template <std::size_t G>
struct ExpandedMats {
  const Matrix* mats;
  __m256i at(std::size_t s, std::size_t g) const { return mats[s * G + g].v; }
};

// ... or in the table, by coefficient (rows of k), for calls too short to repay expanding.
struct TableMats {
  const std::uint8_t* coefs;
  std::size_t k;
  __m256i at(std::size_t s, std::size_t g) const { return matrix_of(coefs[g * k + s]); }
};

// G outputs over columns [off, off + n) of k sources; coefs (row stride k) serves the scalar tail.
template <std::size_t G, class Mats>
void dot_columns(std::uint8_t* const* dsts, const std::uint8_t* const* srcs, std::size_t k, Mats mats,
                 const std::uint8_t* coefs, std::size_t off, std::size_t n, bool accumulate) {
  const std::size_t end = off + n;
  std::size_t pos = off;
  // Two vectors per step so each matrix loaded serves 64 bytes.
  for (; pos + 2 * kVec <= end; pos += 2 * kVec) {
    __m256i a[G], b[G];
    for (std::size_t g = 0; g < G; ++g) {
      a[g] = accumulate ? load(dsts[g] + pos) : _mm256_setzero_si256();
      b[g] = accumulate ? load(dsts[g] + pos + kVec) : _mm256_setzero_si256();
    }
    for (std::size_t s = 0; s < k; ++s) {
      const __m256i x = load(srcs[s] + pos), y = load(srcs[s] + pos + kVec);
      for (std::size_t g = 0; g < G; ++g) {
        const __m256i matrix = mats.at(s, g);
        a[g] = _mm256_xor_si256(a[g], times(x, matrix));
        b[g] = _mm256_xor_si256(b[g], times(y, matrix));
      }
    }
    for (std::size_t g = 0; g < G; ++g) {
      store(dsts[g] + pos, a[g]);
      store(dsts[g] + pos + kVec, b[g]);
    }
  }
  for (; pos + kVec <= end; pos += kVec) {
    __m256i a[G];
    for (std::size_t g = 0; g < G; ++g) a[g] = accumulate ? load(dsts[g] + pos) : _mm256_setzero_si256();
    for (std::size_t s = 0; s < k; ++s) {
      const __m256i x = load(srcs[s] + pos);
      for (std::size_t g = 0; g < G; ++g) a[g] = _mm256_xor_si256(a[g], times(x, mats.at(s, g)));
    }
    for (std::size_t g = 0; g < G; ++g) store(dsts[g] + pos, a[g]);
  }
  dot_tail(dsts, G, srcs, k, coefs, pos, end, accumulate);
}

template <std::size_t G>
void dot_group(std::uint8_t* const* dsts, const std::uint8_t* const* srcs, std::size_t k, const Matrix* mats,
               const std::uint8_t* coefs, std::size_t off, std::size_t n, bool accumulate) {
  dot_columns<G>(dsts, srcs, k, ExpandedMats<G>{mats}, coefs, off, n, accumulate);
}

template <std::size_t G>
void dot_group_from_table(std::uint8_t* const* dsts, const std::uint8_t* const* srcs, std::size_t k,
                          const std::uint8_t* coefs, std::size_t len, bool accumulate) {
  dot_columns<G>(dsts, srcs, k, TableMats{coefs, k}, coefs, 0, len, accumulate);
}

using GroupFn = void (*)(std::uint8_t* const*, const std::uint8_t* const*, std::size_t, const Matrix*,
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
// level does (region_gfni.cpp says why); here an expanded matrix is a whole 32-byte vector.
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
  thread_local ExpansionCache<Matrix> cache;
  const Matrix* mats = expand_cached(cache, coefs, m, k, kGroup, expand);
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
