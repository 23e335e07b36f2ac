#pragma once
// AES-128-CMAC (RFC 4493): the per-session authenticator of version 2 CODED packets (docs/protocol.md
// section 2.8). The key is expanded once per session and a MAC costs a few AES rounds in registers (AES-NI)
// rather than an OpenSSL EVP call: that per-call dispatch, not the cipher, was the cost of sealing every
// datagram per session (docs/streaming.md). Where the CPU lacks AES-NI, the blocks go through OpenSSL's
// AES-128-ECB, still keyed once.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

struct evp_cipher_ctx_st;

namespace ncast::proto {

using Block = std::array<std::uint8_t, 16>;

class Cmac {
 public:
  // openssl: OpenSSL's AES even where AES-NI is there (tests cover both paths on one machine).
  enum class Engine { automatic, openssl };
  explicit Cmac(std::span<const std::uint8_t, 16> key, Engine engine = Engine::automatic);
  ~Cmac();
  Cmac(const Cmac&) = delete;
  Cmac& operator=(const Cmac&) = delete;

  // The MAC of the concatenation of two spans (a header and a digest need no copy into one buffer).
  Block mac(std::span<const std::uint8_t> first, std::span<const std::uint8_t> second = {}) const;
  // Whether this object uses the AES-NI instructions (false: OpenSSL's AES for each block).
  bool hardware() const { return ctx_ == nullptr; }

 private:
  Block encrypt(const Block& in) const;

  alignas(16) std::array<std::uint8_t, 11 * 16> round_keys_{};
  evp_cipher_ctx_st* ctx_ = nullptr;  // the fallback's keyed AES-128-ECB context
  Block k1_{}, k2_{};
};

}  // namespace ncast::proto
