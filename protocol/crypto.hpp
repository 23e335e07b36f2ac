#pragma once
// The cryptographic primitives of the protocol, all from OpenSSL libcrypto 3 (docs/protocol.md
// sections 1 and 4): random octets, SHA-256, HMAC-SHA-256, HKDF-SHA-256, X25519, Ed25519 and the two
// AEAD suites. Thin RAII wrappers; failures of the library throw CryptoError, failures of the other
// side (a bad signature, a low-order public key, a wrong tag) are ordinary return values.
#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

struct evp_pkey_st;
struct evp_cipher_ctx_st;

namespace ncast::proto {

class CryptoError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

using Sha256Digest = std::array<std::uint8_t, 32>;
using PublicKey = std::array<std::uint8_t, 32>;  // X25519 or Ed25519
using Signature = std::array<std::uint8_t, 64>;

void random_bytes(std::span<std::uint8_t> out);
// Four random octets as one number: ids and epochs that must not repeat across runs.
std::uint32_t random_u32();

Sha256Digest sha256(std::span<const std::uint8_t> data);

// Incremental SHA-256, for segments hashed as they arrive.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void update(std::span<const std::uint8_t> data);
  Sha256Digest finish();  // resets for reuse

 private:
  void* ctx_;
};

Sha256Digest hmac_sha256(std::span<const std::uint8_t> key, std::span<const std::uint8_t> data);

// HKDF-SHA-256 extract-and-expand (RFC 5869) into out.
void hkdf_sha256(std::span<const std::uint8_t> salt, std::span<const std::uint8_t> ikm,
                 std::span<const std::uint8_t> info, std::span<std::uint8_t> out);

// Owning handle to an OpenSSL key.
struct PkeyDelete {
  void operator()(evp_pkey_st* key) const;
};
using PkeyPtr = std::unique_ptr<evp_pkey_st, PkeyDelete>;

// An ephemeral X25519 key pair.
class X25519KeyPair {
 public:
  X25519KeyPair();  // fresh random key
  // A given private key (RFC 7748 test vectors, keys kept elsewhere).
  explicit X25519KeyPair(std::span<const std::uint8_t, 32> private_key);
  const PublicKey& public_key() const { return public_; }
  // The shared secret with other's public key; nullopt for a low-order key (an all-zero result).
  std::optional<std::array<std::uint8_t, 32>> agree(const PublicKey& other) const;

 private:
  PkeyPtr key_;
  PublicKey public_{};
};

// A long-term Ed25519 identity.
class Ed25519Identity {
 public:
  static Ed25519Identity generate();
  // Reads a PEM private key; throws CryptoError naming the file when it cannot.
  static Ed25519Identity load(const std::filesystem::path& path);
  // Loads path if it exists, else generates a key and writes it there readable by its owner only.
  static Ed25519Identity load_or_create(const std::filesystem::path& path);
  // Writes the private key as PEM (mode 0600); never overwrites an existing file.
  void save(const std::filesystem::path& path) const;

  const PublicKey& public_key() const { return public_; }
  Signature sign(std::span<const std::uint8_t> message) const;

 private:
  explicit Ed25519Identity(PkeyPtr key);
  PkeyPtr key_;
  PublicKey public_{};
};

bool ed25519_verify(const PublicKey& key, std::span<const std::uint8_t> message, const Signature& signature);

// docs/protocol.md section 4.
enum class Suite : std::uint8_t { aes128_gcm = 1, chacha20_poly1305 = 2 };
inline constexpr std::size_t kTagSize = 16;
inline constexpr std::size_t kIvSize = 12;

std::optional<Suite> suite_from_wire(std::uint8_t id);
std::size_t key_size(Suite suite);
std::string_view to_string(Suite suite);

// One direction of a session: seals (or opens) packets with a fixed key, the nonce made from the
// packet number. Keeps its OpenSSL context initialised with the key, so a packet costs one IV set-up.
class Aead {
 public:
  enum class Direction { seal, open };
  Aead(Suite suite, std::span<const std::uint8_t> key, std::span<const std::uint8_t, kIvSize> iv, Direction direction);
  ~Aead();
  Aead(const Aead&) = delete;
  Aead& operator=(const Aead&) = delete;

  Suite suite() const { return suite_; }

  // packet = associated data (aad_len octets) || plaintext (body_len) || room for the tag. Encrypts the
  // body in place and writes the tag after it.
  void seal(std::uint64_t number, std::uint8_t* packet, std::size_t aad_len, std::size_t body_len);
  // packet = associated data || ciphertext (body_len) || tag. Decrypts in place; false (and the body
  // unspecified) if the tag does not verify.
  bool open(std::uint64_t number, std::uint8_t* packet, std::size_t aad_len, std::size_t body_len);
  // The same with the nonce given whole (the iv unused): a stream key's, whose nonce is a CODED
  // packet's coded header (docs/protocol.md section 2.8).
  void seal_at(std::span<const std::uint8_t, kIvSize> nonce, std::uint8_t* packet, std::size_t aad_len,
               std::size_t body_len);
  bool open_at(std::span<const std::uint8_t, kIvSize> nonce, std::uint8_t* packet, std::size_t aad_len,
               std::size_t body_len);

 private:
  std::array<std::uint8_t, kIvSize> nonce(std::uint64_t number) const;

  Suite suite_;
  Direction direction_;
  std::array<std::uint8_t, kIvSize> iv_{};
  evp_cipher_ctx_st* ctx_;
};

std::string to_hex(std::span<const std::uint8_t> bytes);
// 2·N hex digits into N octets; nullopt on any other input.
std::optional<std::vector<std::uint8_t>> from_hex(std::string_view hex);

}  // namespace ncast::proto
