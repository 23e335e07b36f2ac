// AVX2 kernels: split nibble tables looked up with PSHUFB, 32 bytes per step.
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <vector>

#include "coding/region_blocking.hpp"
#include "coding/region_coef_tables.hpp"
#include "coding/region_levels.hpp"

namespace ncast::gf::detail {
namespace {

constexpr std::size_t kVec = 32;
// Outputs kept in registers per pass: 4 accumulators plus tables and nibbles fit the 16 ymm.
constexpr std::size_t kGroup = 4;

struct Tables {
  __m256i lo, hi;
};

// Each 16-byte half of a coefficient's tables broadcast to both lanes: one load (vbroadcasti128).
__m256i broadcast(const std::array<std::uint8_t, 16>& half) {
  return _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(half.data())));
}

Tables tables_for(std::uint8_t c) { return {broadcast(kNibbleTable[c].lo), broadcast(kNibbleTable[c].hi)}; }

// The group kernels read a coefficient's tables straight from kNibbleTable (8 KiB for all 256, so
// they stay in L1) rather than from a per-matrix copy of 64 bytes a coefficient, which for the m·k
// coefficients of a wide code or an RLNC generation outgrows L1 and L2 and is streamed again for every
// column chunk.
using TableRef = const NibbleTable*;
TableRef table_ref(std::uint8_t c) { return &kNibbleTable[c]; }

struct Nibbles {
  __m256i lo, hi;
};

Nibbles split(__m256i x) {
  const __m256i mask = _mm256_set1_epi8(0x0f);
  return {_mm256_and_si256(x, mask), _mm256_and_si256(_mm256_srli_epi16(x, 4), mask)};
}

__m256i times(const Nibbles& x, const Tables& t) {
  return _mm256_xor_si256(_mm256_shuffle_epi8(t.lo, x.lo), _mm256_shuffle_epi8(t.hi, x.hi));
}

__m256i load(const std::uint8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
void store(std::uint8_t* p, __m256i v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); }

void mul(std::uint8_t* dst, const std::uint8_t* src, std::uint8_t c, std::size_t len) {
  const Tables t = tables_for(c);
  std::size_t i = 0;
  for (; i + kVec <= len; i += kVec) store(dst + i, times(split(load(src + i)), t));
  const std::uint8_t* row = mul_row(c);
  for (; i < len; ++i) dst[i] = row[src[i]];
}

void mul_add(std::uint8_t* dst, const std::uint8_t* src, std::uint8_t c, std::size_t len) {
  if (c == 0) return;
  const Tables t = tables_for(c);
  std::size_t i = 0;
  for (; i + kVec <= len; i += kVec) store(dst + i, _mm256_xor_si256(load(dst + i), times(split(load(src + i)), t)));
  const std::uint8_t* row = mul_row(c);
  for (; i < len; ++i) dst[i] ^= row[src[i]];
}

// G outputs over columns [off, off + n) of k sources; tabs holds G table references per source,
// source-major; coefs (row stride k) serves the scalar tail.
template <std::size_t G>
void dot_group(std::uint8_t* const* dsts, const std::uint8_t* const* srcs, std::size_t k, const TableRef* tabs,
               const std::uint8_t* coefs, std::size_t off, std::size_t n, bool accumulate, bool prefetch) {
  const std::size_t end = off + n;
  std::size_t pos = off;
  // Two vectors per step so each pair of tables loaded serves 64 bytes.
  for (; pos + 2 * kVec <= end; pos += 2 * kVec) {
    __m256i a[G], b[G];
    for (std::size_t g = 0; g < G; ++g) {
      a[g] = accumulate ? load(dsts[g] + pos) : _mm256_setzero_si256();
      b[g] = accumulate ? load(dsts[g] + pos + kVec) : _mm256_setzero_si256();
    }
    const TableRef* t = tabs;
    for (std::size_t s = 0; s < k; ++s, t += G) {
      const Nibbles x = split(load(srcs[s] + pos));
      const Nibbles y = split(load(srcs[s] + pos + kVec));
      if (prefetch) _mm_prefetch(reinterpret_cast<const char*>(srcs[s] + pos + kPrefetchDistance), _MM_HINT_T1);
      // One table register at a time, each lookup folded straight into its accumulator: with 8
      // accumulators live, anything more makes the compiler reload every table twice.
      for (std::size_t g = 0; g < G; ++g) {
        const __m256i lo = broadcast(t[g]->lo);
        a[g] = _mm256_xor_si256(a[g], _mm256_shuffle_epi8(lo, x.lo));
        b[g] = _mm256_xor_si256(b[g], _mm256_shuffle_epi8(lo, y.lo));
        const __m256i hi = broadcast(t[g]->hi);
        a[g] = _mm256_xor_si256(a[g], _mm256_shuffle_epi8(hi, x.hi));
        b[g] = _mm256_xor_si256(b[g], _mm256_shuffle_epi8(hi, y.hi));
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
    const TableRef* t = tabs;
    for (std::size_t s = 0; s < k; ++s, t += G) {
      const Nibbles x = split(load(srcs[s] + pos));
      for (std::size_t g = 0; g < G; ++g)
        a[g] = _mm256_xor_si256(a[g], times(x, {broadcast(t[g]->lo), broadcast(t[g]->hi)}));
    }
    for (std::size_t g = 0; g < G; ++g) store(dsts[g] + pos, a[g]);
  }
  dot_tail(dsts, G, srcs, k, coefs, pos, end, accumulate);
}

using GroupFn = void (*)(std::uint8_t* const*, const std::uint8_t* const*, std::size_t, const TableRef*,
                         const std::uint8_t*, std::size_t, std::size_t, bool, bool);
constexpr GroupFn kGroupFns[kGroup + 1] = {nullptr, dot_group<1>, dot_group<2>, dot_group<3>, dot_group<4>};

void dot_multi(std::uint8_t* const* dsts, std::size_t m, const std::uint8_t* const* srcs, std::size_t k,
               const std::uint8_t* coefs, std::size_t len, bool accumulate) {
  if (trivial_dot_multi(dsts, m, k, len, accumulate)) return;
  thread_local ExpansionCache<TableRef> cache;
  const TableRef* tabs = expand_cached(cache, coefs, m, k, kGroup, table_ref);
  const bool prefetch = prefetch_pays(k, m, len);
  for_each_block(m, k, len, kGroup, [&](std::size_t g0, std::size_t gs, std::size_t off, std::size_t n) {
    kGroupFns[gs](dsts + g0, srcs, k, tabs + g0 * k, coefs + g0 * k, off, n, accumulate, prefetch);
  });
}

void dot(std::uint8_t* dst, const std::uint8_t* const* srcs, const std::uint8_t* coefs, std::size_t k,
         std::size_t len) {
  dot_multi(&dst, 1, srcs, k, coefs, len, false);
}

}  // namespace

const RegionKernels kAvx2Kernels{Level::avx2, mul, mul_add, dot, dot_multi};

}  // namespace ncast::gf::detail
