#include "coding/rlnc/philox_avx512.hpp"

#include <immintrin.h>

#include <cstring>

namespace ncast::rlnc::detail {
namespace {

constexpr __mmask16 kOdd = 0xAAAA;
// The zero-masking forms with every lane selected: GCC 12's unmasked ones pass an undefined vector
// through and draw -Wmaybe-uninitialized.
constexpr __mmask8 kAll = 0xFF;
constexpr __mmask16 kAll32 = 0xFFFF;

// The high and low halves of the 32 × 32-bit products of each lane of a with m.
void mulhilo(__m512i a, __m512i m, __m512i& hi, __m512i& lo) {
  const __m512i even = _mm512_maskz_mul_epu32(kAll, a, m);
  const __m512i odd = _mm512_maskz_mul_epu32(kAll, _mm512_maskz_srli_epi64(kAll, a, 32), m);
  hi = _mm512_mask_blend_epi32(kOdd, _mm512_maskz_srli_epi64(kAll, even, 32), odd);
  lo = _mm512_mask_blend_epi32(kOdd, even, _mm512_maskz_slli_epi64(kAll, odd, 32));
}

__m512i unpacklo32(__m512i a, __m512i b) { return _mm512_maskz_unpacklo_epi32(kAll32, a, b); }
__m512i unpackhi32(__m512i a, __m512i b) { return _mm512_maskz_unpackhi_epi32(kAll32, a, b); }
__m512i unpacklo64(__m512i a, __m512i b) { return _mm512_maskz_unpacklo_epi64(kAll, a, b); }
__m512i unpackhi64(__m512i a, __m512i b) { return _mm512_maskz_unpackhi_epi64(kAll, a, b); }
// 128-bit chunks: two of a, then two of b, as imm selects.
template <int Imm>
__m512i chunks(__m512i a, __m512i b) {
  return _mm512_maskz_shuffle_i32x4(kAll32, a, b, Imm);
}

}  // namespace

// Lane i of c0..c3 is the counter, then the output, of block i; the rounds are those of
// philox4x32_10, and the four words are transposed into block order at the end.
void philox4x32_10_blocks_avx512(PhiloxCounter counter, PhiloxKey key, std::size_t count, std::uint32_t* out) {
  const __m512i m0 = _mm512_set1_epi32(static_cast<int>(0xD2511F53u));
  const __m512i m1 = _mm512_set1_epi32(static_cast<int>(0xCD9E8D57u));
  const __m512i lanes = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  for (std::size_t base = 0; base < count; base += 16) {
    __m512i c0 = _mm512_add_epi32(_mm512_set1_epi32(static_cast<int>(counter[0] + base)), lanes);
    __m512i c1 = _mm512_set1_epi32(static_cast<int>(counter[1]));
    __m512i c2 = _mm512_set1_epi32(static_cast<int>(counter[2]));
    __m512i c3 = _mm512_set1_epi32(static_cast<int>(counter[3]));
    std::uint32_t k0 = key[0], k1 = key[1];
    for (int round = 0; round < 10; ++round) {
      __m512i hi0, lo0, hi1, lo1;
      mulhilo(c0, m0, hi0, lo0);
      mulhilo(c2, m1, hi1, lo1);
      c0 = _mm512_xor_si512(_mm512_xor_si512(hi1, c1), _mm512_set1_epi32(static_cast<int>(k0)));
      c1 = lo1;
      c2 = _mm512_xor_si512(_mm512_xor_si512(hi0, c3), _mm512_set1_epi32(static_cast<int>(k1)));
      c3 = lo0;
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    // 4 × 16 words to 16 blocks of 4: within each 128-bit chunk, then across chunks.
    const __m512i t0 = unpacklo32(c0, c1), t1 = unpackhi32(c0, c1);
    const __m512i t2 = unpacklo32(c2, c3), t3 = unpackhi32(c2, c3);
    const __m512i u0 = unpacklo64(t0, t2), u1 = unpackhi64(t0, t2);
    const __m512i u2 = unpacklo64(t1, t3), u3 = unpackhi64(t1, t3);
    const __m512i v0 = chunks<0x44>(u0, u1), v1 = chunks<0x44>(u2, u3);
    const __m512i v2 = chunks<0xEE>(u0, u1), v3 = chunks<0xEE>(u2, u3);
    const __m512i blocks[4] = {chunks<0x88>(v0, v1), chunks<0xDD>(v0, v1), chunks<0x88>(v2, v3), chunks<0xDD>(v2, v3)};
    std::uint32_t* dst = out + 4 * base;
    if (count - base >= 16) {
      for (int i = 0; i < 4; ++i) _mm512_storeu_si512(dst + 16 * i, blocks[i]);
    } else {
      alignas(64) std::uint32_t tmp[64];
      for (int i = 0; i < 4; ++i) _mm512_store_si512(tmp + 16 * i, blocks[i]);
      std::memcpy(dst, tmp, 16 * (count - base));
    }
  }
}

}  // namespace ncast::rlnc::detail
