#include "protocol/crypto.hpp"

#include <fcntl.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/kdf.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace ncast::proto {
namespace {

[[noreturn]] void fail(const char* what) {
  char buf[256] = "no detail";
  if (unsigned long e = ERR_get_error()) ERR_error_string_n(e, buf, sizeof buf);
  ERR_clear_error();
  throw CryptoError(std::string("OpenSSL: ") + what + ": " + buf);
}

void check(int ok, const char* what) {
  if (ok != 1) fail(what);
}

struct MdCtxDelete {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};
using MdCtx = std::unique_ptr<EVP_MD_CTX, MdCtxDelete>;

struct PkeyCtxDelete {
  void operator()(EVP_PKEY_CTX* c) const { EVP_PKEY_CTX_free(c); }
};
using PkeyCtx = std::unique_ptr<EVP_PKEY_CTX, PkeyCtxDelete>;

struct FileClose {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

PublicKey raw_public(EVP_PKEY* key) {
  PublicKey out{};
  std::size_t len = out.size();
  check(EVP_PKEY_get_raw_public_key(key, out.data(), &len), "raw public key");
  if (len != out.size()) throw CryptoError("OpenSSL: unexpected public key length");
  return out;
}

}  // namespace

void PkeyDelete::operator()(evp_pkey_st* key) const { EVP_PKEY_free(key); }

void random_bytes(std::span<std::uint8_t> out) {
  if (out.empty()) return;
  check(RAND_bytes(out.data(), static_cast<int>(out.size())), "RAND_bytes");
}

std::uint32_t random_u32() {
  std::array<std::uint8_t, 4> b{};
  random_bytes(b);
  return std::uint32_t{b[0]} << 24 | std::uint32_t{b[1]} << 16 | std::uint32_t{b[2]} << 8 | b[3];
}

Sha256Digest sha256(std::span<const std::uint8_t> data) {
  Sha256Digest out{};
  unsigned len = 0;
  check(EVP_Digest(data.data(), data.size(), out.data(), &len, EVP_sha256(), nullptr), "SHA-256");
  return out;
}

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  if (!ctx_) fail("EVP_MD_CTX_new");
  check(EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(ctx_), EVP_sha256(), nullptr), "SHA-256 init");
}

Sha256::~Sha256() { EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(ctx_)); }

void Sha256::update(std::span<const std::uint8_t> data) {
  check(EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(ctx_), data.data(), data.size()), "SHA-256 update");
}

Sha256Digest Sha256::finish() {
  Sha256Digest out{};
  unsigned len = 0;
  auto* ctx = static_cast<EVP_MD_CTX*>(ctx_);
  check(EVP_DigestFinal_ex(ctx, out.data(), &len), "SHA-256 final");
  check(EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr), "SHA-256 init");
  return out;
}

Sha256Digest hmac_sha256(std::span<const std::uint8_t> key, std::span<const std::uint8_t> data) {
  Sha256Digest out{};
  unsigned len = 0;
  if (!HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), data.data(), data.size(), out.data(), &len))
    fail("HMAC-SHA-256");
  return out;
}

void hkdf_sha256(std::span<const std::uint8_t> salt, std::span<const std::uint8_t> ikm,
                 std::span<const std::uint8_t> info, std::span<std::uint8_t> out) {
  EVP_KDF* kdf = EVP_KDF_fetch(nullptr, "HKDF", nullptr);
  if (!kdf) fail("fetch HKDF");
  EVP_KDF_CTX* ctx = EVP_KDF_CTX_new(kdf);
  EVP_KDF_free(kdf);
  if (!ctx) fail("HKDF context");
  char digest[] = "SHA256";
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, digest, 0),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, const_cast<std::uint8_t*>(ikm.data()), ikm.size()),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, const_cast<std::uint8_t*>(salt.data()), salt.size()),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, const_cast<std::uint8_t*>(info.data()), info.size()),
      OSSL_PARAM_construct_end()};
  const int ok = EVP_KDF_derive(ctx, out.data(), out.size(), params);
  EVP_KDF_CTX_free(ctx);
  check(ok, "HKDF-SHA-256");
}

X25519KeyPair::X25519KeyPair() : key_(EVP_PKEY_Q_keygen(nullptr, nullptr, "X25519")) {
  if (!key_) fail("X25519 key generation");
  public_ = raw_public(key_.get());
}

X25519KeyPair::X25519KeyPair(std::span<const std::uint8_t, 32> private_key)
    : key_(EVP_PKEY_new_raw_private_key(EVP_PKEY_X25519, nullptr, private_key.data(), private_key.size())) {
  if (!key_) fail("X25519 private key");
  public_ = raw_public(key_.get());
}

std::optional<std::array<std::uint8_t, 32>> X25519KeyPair::agree(const PublicKey& other) const {
  PkeyPtr peer(EVP_PKEY_new_raw_public_key(EVP_PKEY_X25519, nullptr, other.data(), other.size()));
  if (!peer) fail("X25519 public key");
  PkeyCtx ctx(EVP_PKEY_CTX_new(key_.get(), nullptr));
  if (!ctx) fail("X25519 context");
  check(EVP_PKEY_derive_init(ctx.get()), "X25519 derive init");
  std::array<std::uint8_t, 32> shared{};
  std::size_t len = shared.size();
  // OpenSSL refuses a peer key of small order (all-zero result); so do we, whatever the version.
  if (EVP_PKEY_derive_set_peer(ctx.get(), peer.get()) != 1 || EVP_PKEY_derive(ctx.get(), shared.data(), &len) != 1 ||
      len != shared.size()) {
    ERR_clear_error();
    return std::nullopt;
  }
  static constexpr std::array<std::uint8_t, 32> kZero{};
  if (CRYPTO_memcmp(shared.data(), kZero.data(), shared.size()) == 0) return std::nullopt;
  return shared;
}

Ed25519Identity::Ed25519Identity(PkeyPtr key) : key_(std::move(key)) { public_ = raw_public(key_.get()); }

Ed25519Identity Ed25519Identity::generate() {
  PkeyPtr key(EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519"));
  if (!key) fail("Ed25519 key generation");
  return Ed25519Identity(std::move(key));
}

Ed25519Identity Ed25519Identity::load(const std::filesystem::path& path) {
  std::unique_ptr<std::FILE, FileClose> f(std::fopen(path.c_str(), "r"));
  if (!f) throw CryptoError("cannot open identity key " + path.string() + ": " + std::strerror(errno));
  PkeyPtr key(PEM_read_PrivateKey(f.get(), nullptr, nullptr, nullptr));
  if (!key) {
    ERR_clear_error();
    throw CryptoError("identity key " + path.string() + " is not a PEM private key");
  }
  if (EVP_PKEY_get_id(key.get()) != EVP_PKEY_ED25519)
    throw CryptoError("identity key " + path.string() + " is not an Ed25519 key");
  return Ed25519Identity(std::move(key));
}

Ed25519Identity Ed25519Identity::load_or_create(const std::filesystem::path& path) {
  if (std::filesystem::exists(path)) return load(path);
  Ed25519Identity id = generate();
  id.save(path);
  return id;
}

void Ed25519Identity::save(const std::filesystem::path& path) const {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) throw CryptoError("cannot create identity key " + path.string() + ": " + std::strerror(errno));
  std::unique_ptr<std::FILE, FileClose> f(::fdopen(fd, "w"));
  if (!f) {
    ::close(fd);
    throw CryptoError("cannot write identity key " + path.string());
  }
  if (PEM_write_PrivateKey(f.get(), key_.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    ERR_clear_error();
    throw CryptoError("cannot write identity key " + path.string());
  }
}

Signature Ed25519Identity::sign(std::span<const std::uint8_t> message) const {
  MdCtx ctx(EVP_MD_CTX_new());
  if (!ctx) fail("EVP_MD_CTX_new");
  check(EVP_DigestSignInit(ctx.get(), nullptr, nullptr, nullptr, key_.get()), "Ed25519 sign init");
  Signature sig{};
  std::size_t len = sig.size();
  check(EVP_DigestSign(ctx.get(), sig.data(), &len, message.data(), message.size()), "Ed25519 sign");
  return sig;
}

bool ed25519_verify(const PublicKey& key, std::span<const std::uint8_t> message, const Signature& signature) {
  PkeyPtr pkey(EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr, key.data(), key.size()));
  if (!pkey) {
    ERR_clear_error();
    return false;
  }
  MdCtx ctx(EVP_MD_CTX_new());
  if (!ctx) fail("EVP_MD_CTX_new");
  check(EVP_DigestVerifyInit(ctx.get(), nullptr, nullptr, nullptr, pkey.get()), "Ed25519 verify init");
  const bool ok = EVP_DigestVerify(ctx.get(), signature.data(), signature.size(), message.data(), message.size()) == 1;
  ERR_clear_error();
  return ok;
}

std::optional<Suite> suite_from_wire(std::uint8_t id) {
  switch (id) {
    case 1: return Suite::aes128_gcm;
    case 2: return Suite::chacha20_poly1305;
    default: return std::nullopt;
  }
}

std::size_t key_size(Suite suite) { return suite == Suite::aes128_gcm ? 16 : 32; }

std::string_view to_string(Suite suite) { return suite == Suite::aes128_gcm ? "aes-128-gcm" : "chacha20-poly1305"; }

Aead::Aead(Suite suite, std::span<const std::uint8_t> key, std::span<const std::uint8_t, kIvSize> iv,
           Direction direction)
    : suite_(suite), direction_(direction), ctx_(EVP_CIPHER_CTX_new()) {
  if (!ctx_) fail("EVP_CIPHER_CTX_new");
  if (key.size() != key_size(suite)) {
    EVP_CIPHER_CTX_free(ctx_);
    throw CryptoError("AEAD key of the wrong length");
  }
  std::memcpy(iv_.data(), iv.data(), kIvSize);
  const EVP_CIPHER* cipher = suite == Suite::aes128_gcm ? EVP_aes_128_gcm() : EVP_chacha20_poly1305();
  if (EVP_CipherInit_ex(ctx_, cipher, nullptr, key.data(), nullptr, direction == Direction::seal ? 1 : 0) != 1) {
    EVP_CIPHER_CTX_free(ctx_);
    fail("AEAD init");
  }
}

Aead::~Aead() { EVP_CIPHER_CTX_free(ctx_); }

std::array<std::uint8_t, kIvSize> Aead::nonce(std::uint64_t number) const {
  auto n = iv_;
  for (int i = 0; i < 8; ++i) n[kIvSize - 1 - i] ^= static_cast<std::uint8_t>(number >> (8 * i));
  return n;
}

void Aead::seal(std::uint64_t number, std::uint8_t* packet, std::size_t aad_len, std::size_t body_len) {
  seal_at(nonce(number), packet, aad_len, body_len);
}

bool Aead::open(std::uint64_t number, std::uint8_t* packet, std::size_t aad_len, std::size_t body_len) {
  return open_at(nonce(number), packet, aad_len, body_len);
}

void Aead::seal_at(std::span<const std::uint8_t, kIvSize> n, std::uint8_t* packet, std::size_t aad_len,
                   std::size_t body_len) {
  if (direction_ != Direction::seal) throw CryptoError("AEAD: seal on an opening context");
  int len = 0;
  std::uint8_t* body = packet + aad_len;
  check(EVP_CipherInit_ex(ctx_, nullptr, nullptr, nullptr, n.data(), 1), "AEAD nonce");
  check(EVP_CipherUpdate(ctx_, nullptr, &len, packet, static_cast<int>(aad_len)), "AEAD associated data");
  check(EVP_CipherUpdate(ctx_, body, &len, body, static_cast<int>(body_len)), "AEAD encrypt");
  int tail = 0;
  check(EVP_CipherFinal_ex(ctx_, body + len, &tail), "AEAD final");
  check(EVP_CIPHER_CTX_ctrl(ctx_, EVP_CTRL_AEAD_GET_TAG, kTagSize, body + body_len), "AEAD tag");
}

bool Aead::open_at(std::span<const std::uint8_t, kIvSize> n, std::uint8_t* packet, std::size_t aad_len,
                   std::size_t body_len) {
  if (direction_ != Direction::open) throw CryptoError("AEAD: open on a sealing context");
  int len = 0;
  std::uint8_t* body = packet + aad_len;
  check(EVP_CipherInit_ex(ctx_, nullptr, nullptr, nullptr, n.data(), 0), "AEAD nonce");
  check(EVP_CIPHER_CTX_ctrl(ctx_, EVP_CTRL_AEAD_SET_TAG, kTagSize, body + body_len), "AEAD set tag");
  check(EVP_CipherUpdate(ctx_, nullptr, &len, packet, static_cast<int>(aad_len)), "AEAD associated data");
  check(EVP_CipherUpdate(ctx_, body, &len, body, static_cast<int>(body_len)), "AEAD decrypt");
  int tail = 0;
  const bool ok = EVP_CipherFinal_ex(ctx_, body + len, &tail) == 1;
  ERR_clear_error();
  return ok;
}

std::string to_hex(std::span<const std::uint8_t> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s;
  s.reserve(bytes.size() * 2);
  for (auto b : bytes) {
    s.push_back(kDigits[b >> 4]);
    s.push_back(kDigits[b & 15]);
  }
  return s;
}

std::optional<std::vector<std::uint8_t>> from_hex(std::string_view hex) {
  if (hex.size() % 2) return std::nullopt;
  auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::vector<std::uint8_t> out(hex.size() / 2);
  for (std::size_t i = 0; i < out.size(); ++i) {
    const int hi = digit(hex[2 * i]), lo = digit(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out[i] = static_cast<std::uint8_t>(hi << 4 | lo);
  }
  return out;
}

}  // namespace ncast::proto
