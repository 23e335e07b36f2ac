#include "protocol/cmac.hpp"

#include <openssl/evp.h>

#include <algorithm>

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

__attribute__((target("aes"))) void encrypt_block(const std::uint8_t* round_keys, const std::uint8_t* in,
                                                  std::uint8_t* out) {
  const auto* rk = reinterpret_cast<const __m128i*>(round_keys);
  __m128i x = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in)), _mm_load_si128(rk));
  for (int i = 1; i < 10; ++i) x = _mm_aesenc_si128(x, _mm_load_si128(rk + i));
  x = _mm_aesenclast_si128(x, _mm_load_si128(rk + 10));
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

// RFC 4493 section 2.4 over first || second, read block by block across the seam.
Block Cmac::mac(std::span<const std::uint8_t> first, std::span<const std::uint8_t> second) const {
  const std::size_t total = first.size() + second.size();
  const std::size_t blocks = total == 0 ? 1 : (total + 15) / 16;
  auto octet = [&](std::size_t i) { return i < first.size() ? first[i] : second[i - first.size()]; };
  Block x{};
  for (std::size_t b = 0; b < blocks; ++b) {
    const std::size_t at = 16 * b;
    const std::size_t len = std::min<std::size_t>(16, total - std::min(total, at));
    for (std::size_t i = 0; i < len; ++i) x[i] ^= octet(at + i);
    if (b + 1 < blocks) {
      x = encrypt(x);
      continue;
    }
    // The last block: complete, masked with K1; or padded with 10…0 and masked with K2.
    const Block& subkey = len == 16 ? k1_ : k2_;
    if (len < 16) x[len] ^= 0x80;
    for (std::size_t i = 0; i < 16; ++i) x[i] ^= subkey[i];
    x = encrypt(x);
  }
  return x;
}

}  // namespace ncast::proto
