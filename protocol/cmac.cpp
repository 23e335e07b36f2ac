#include "protocol/cmac.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "protocol/crypto.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#define NCAST_AESNI 1
#endif

namespace ncast::proto {
namespace {

#if NCAST_AESNI
bool cpu_has_aesni() { return __builtin_cpu_supports("aes") != 0; }

__attribute__((target("aes"))) __m128i expand_step(__m128i key, __m128i assist) {
  assist = _mm_shuffle_epi32(assist, 0xff);
  key = _mm_xor_si128(key, _mm_slli_si128(key, 4));
  key = _mm_xor_si128(key, _mm_slli_si128(key, 4));
  key = _mm_xor_si128(key, _mm_slli_si128(key, 4));
  return _mm_xor_si128(key, assist);
}

// The AES-128 key schedule (FIPS 197 section 5.2) with AESKEYGENASSIST, whose round constant must be
// an immediate: hence one line per round.
__attribute__((target("aes"))) void expand_key(const std::uint8_t* key, std::uint8_t* out) {
  __m128i rk[11];
  rk[0] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(key));
  rk[1] = expand_step(rk[0], _mm_aeskeygenassist_si128(rk[0], 0x01));
  rk[2] = expand_step(rk[1], _mm_aeskeygenassist_si128(rk[1], 0x02));
  rk[3] = expand_step(rk[2], _mm_aeskeygenassist_si128(rk[2], 0x04));
  rk[4] = expand_step(rk[3], _mm_aeskeygenassist_si128(rk[3], 0x08));
  rk[5] = expand_step(rk[4], _mm_aeskeygenassist_si128(rk[4], 0x10));
  rk[6] = expand_step(rk[5], _mm_aeskeygenassist_si128(rk[5], 0x20));
  rk[7] = expand_step(rk[6], _mm_aeskeygenassist_si128(rk[6], 0x40));
  rk[8] = expand_step(rk[7], _mm_aeskeygenassist_si128(rk[7], 0x80));
  rk[9] = expand_step(rk[8], _mm_aeskeygenassist_si128(rk[8], 0x1b));
  rk[10] = expand_step(rk[9], _mm_aeskeygenassist_si128(rk[9], 0x36));
  for (int i = 0; i < 11; ++i) _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 16 * i), rk[i]);
}

__attribute__((target("aes"))) inline __m128i aes_rounds(const __m128i* rk, __m128i x) {
  x = _mm_xor_si128(x, _mm_load_si128(rk));
  for (int i = 1; i < 10; ++i) x = _mm_aesenc_si128(x, _mm_load_si128(rk + i));
  return _mm_aesenclast_si128(x, _mm_load_si128(rk + 10));
}

__attribute__((target("aes"))) void encrypt_block(const std::uint8_t* round_keys, const std::uint8_t* in,
                                                  std::uint8_t* out) {
  const __m128i x =
      aes_rounds(reinterpret_cast<const __m128i*>(round_keys), _mm_loadu_si128(reinterpret_cast<const __m128i*>(in)));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out), x);
}

// RFC 4493 section 2.4 over a contiguous message, every block in registers.
__attribute__((target("aes"))) void cmac_aesni(const std::uint8_t* round_keys, const std::uint8_t* m, std::size_t len,
                                               const Block& k1, const Block& k2, std::uint8_t* out) {
  const auto* rk = reinterpret_cast<const __m128i*>(round_keys);
  __m128i x = _mm_setzero_si128();
  std::size_t at = 0;
  for (; len - at > 16; at += 16)
    x = aes_rounds(rk, _mm_xor_si128(x, _mm_loadu_si128(reinterpret_cast<const __m128i*>(m + at))));
  Block last{};
  const std::size_t rest = len - at;
  std::memcpy(last.data(), m + at, rest);
  const Block& subkey = rest == 16 ? k1 : k2;
  if (rest < 16) last[rest] = 0x80;
  for (std::size_t i = 0; i < 16; ++i) last[i] ^= subkey[i];
  x = aes_rounds(rk, _mm_xor_si128(x, _mm_loadu_si128(reinterpret_cast<const __m128i*>(last.data()))));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out), x);
}
#else
bool cpu_has_aesni() { return false; }
#endif

// Doubling in GF(2^128) (RFC 4493 section 2.3): the subkeys K1 and K2.
Block double_block(const Block& in) {
  Block out{};
  for (std::size_t i = 0; i < 16; ++i)
    out[i] = static_cast<std::uint8_t>(in[i] << 1 | (i + 1 < 16 ? in[i + 1] >> 7 : 0));
  if (in[0] & 0x80) out[15] ^= 0x87;
  return out;
}

}  // namespace

Cmac::Cmac(std::span<const std::uint8_t, 16> key, Engine engine) {
  const bool hardware = engine == Engine::automatic && cpu_has_aesni();
#if NCAST_AESNI
  if (hardware) expand_key(key.data(), round_keys_.data());
#endif
  if (!hardware) {
    ctx_ = EVP_CIPHER_CTX_new();
    if (!ctx_ || EVP_EncryptInit_ex(ctx_, EVP_aes_128_ecb(), nullptr, key.data(), nullptr) != 1 ||
        EVP_CIPHER_CTX_set_padding(ctx_, 0) != 1) {
      EVP_CIPHER_CTX_free(ctx_);
      throw CryptoError("OpenSSL: AES-128 for CMAC");
    }
  }
  k1_ = double_block(encrypt(Block{}));
  k2_ = double_block(k1_);
}

Cmac::~Cmac() {
  EVP_CIPHER_CTX_free(ctx_);
  // The round keys are the session's MAC key: leave nothing of them in freed memory.
  OPENSSL_cleanse(round_keys_.data(), round_keys_.size());
}

Block Cmac::encrypt(const Block& in) const {
  Block out{};
#if NCAST_AESNI
  if (!ctx_) {
    encrypt_block(round_keys_.data(), in.data(), out.data());
    return out;
  }
#endif
  int len = 0;
  if (EVP_EncryptUpdate(ctx_, out.data(), &len, in.data(), static_cast<int>(in.size())) != 1 || len != 16)
    throw CryptoError("OpenSSL: AES-128 block for CMAC");
  return out;
}

Block Cmac::mac(std::span<const std::uint8_t> first, std::span<const std::uint8_t> second) const {
  // One contiguous message: a header and a digest are gathered on the stack, anything longer on the heap.
  std::array<std::uint8_t, 128> small{};
  std::vector<std::uint8_t> large;
  std::span<const std::uint8_t> m = first;
  if (!second.empty()) {
    const std::size_t total = first.size() + second.size();
    std::uint8_t* buf = small.data();
    if (total > small.size()) {
      large.resize(total);
      buf = large.data();
    }
    if (!first.empty()) std::memcpy(buf, first.data(), first.size());
    std::memcpy(buf + first.size(), second.data(), second.size());
    m = {buf, total};
  }
  Block out{};
#if NCAST_AESNI
  if (!ctx_) {
    cmac_aesni(round_keys_.data(), m.data(), m.size(), k1_, k2_, out.data());
    return out;
  }
#endif
  // RFC 4493 section 2.4, one OpenSSL block at a time.
  std::size_t at = 0;
  for (; m.size() - at > 16; at += 16) {
    for (std::size_t i = 0; i < 16; ++i) out[i] ^= m[at + i];
    out = encrypt(out);
  }
  // At most 16 after the loop; the min says so to GCC, whose sanitized build saw an overflow.
  const std::size_t rest = std::min(m.size() - at, out.size());
  for (std::size_t i = 0; i < rest; ++i) out[i] ^= m[at + i];
  if (rest < 16) out[rest] ^= 0x80;
  const Block& subkey = rest == 16 ? k1_ : k2_;
  for (std::size_t i = 0; i < 16; ++i) out[i] ^= subkey[i];
  return encrypt(out);
}

}  // namespace ncast::proto
