#pragma once
// Stateless address-validation tokens (docs/protocol.md section 2.2): the server proves that a peer
// receives at the address it claims without keeping anything per address.
//   token = issued (u32 seconds) || HMAC-SHA-256(key, label || issued || family || ip || port || nonce)[0..16)
#include <array>
#include <cstdint>
#include <span>

#include "net/address.hpp"

namespace ncast::proto {

using Nonce = std::array<std::uint8_t, 16>;

class TokenMinter {
 public:
  static constexpr std::size_t kTokenSize = 20;
  using Token = std::array<std::uint8_t, kTokenSize>;

  // A fresh random key.
  explicit TokenMinter(std::uint32_t lifetime_s = 30);
  TokenMinter(std::span<const std::uint8_t, 32> key, std::uint32_t lifetime_s);

  // now_s: seconds on any clock that only moves forward (the same one for verify).
  Token mint(const net::Address& address, const Nonce& nonce, std::uint32_t now_s) const;
  // Whether token was minted by this key for this address, port and nonce at most lifetime seconds ago.
  bool verify(std::span<const std::uint8_t> token, const net::Address& address, const Nonce& nonce,
              std::uint32_t now_s) const;

  std::uint32_t lifetime_s() const { return lifetime_s_; }

 private:
  std::array<std::uint8_t, 16> mac(std::uint32_t issued, const net::Address& address, const Nonce& nonce) const;

  std::array<std::uint8_t, 32> key_{};
  std::uint32_t lifetime_s_;
};

}  // namespace ncast::proto
