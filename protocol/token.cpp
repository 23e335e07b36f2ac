#include "protocol/token.hpp"

#include <openssl/crypto.h>

#include <cstring>

#include "protocol/crypto.hpp"
#include "protocol/wire.hpp"

namespace ncast::proto {
namespace {
constexpr char kLabel[] = "ncast token v1";
}

TokenMinter::TokenMinter(std::uint32_t lifetime_s) : lifetime_s_(lifetime_s) { random_bytes(key_); }

TokenMinter::TokenMinter(std::span<const std::uint8_t, 32> key, std::uint32_t lifetime_s) : lifetime_s_(lifetime_s) {
  std::memcpy(key_.data(), key.data(), key_.size());
}

std::array<std::uint8_t, 16> TokenMinter::mac(std::uint32_t issued, const net::Address& address,
                                              const Nonce& nonce) const {
  std::array<std::uint8_t, sizeof kLabel - 1 + 4 + 1 + 16 + 2 + 16> input{};
  Writer w(input);
  w.bytes({reinterpret_cast<const std::uint8_t*>(kLabel), sizeof kLabel - 1});
  w.u32(issued);
  w.u8(address.family);
  w.bytes({address.ip.data(), address.ip_size()});
  w.u16(address.port);
  w.bytes(nonce);
  const auto full = hmac_sha256(key_, {input.data(), w.size()});
  std::array<std::uint8_t, 16> out{};
  std::memcpy(out.data(), full.data(), out.size());
  return out;
}

TokenMinter::Token TokenMinter::mint(const net::Address& address, const Nonce& nonce, std::uint32_t now_s) const {
  Token t{};
  Writer w(t);
  w.u32(now_s);
  w.bytes(mac(now_s, address, nonce));
  return t;
}

bool TokenMinter::verify(std::span<const std::uint8_t> token, const net::Address& address, const Nonce& nonce,
                         std::uint32_t now_s) const {
  if (token.size() != kTokenSize) return false;
  Reader r(token);
  const std::uint32_t issued = r.u32();
  // Unsigned difference: a token from the future wraps to a huge age and fails.
  if (static_cast<std::uint32_t>(now_s - issued) > lifetime_s_) return false;
  const auto expected = mac(issued, address, nonce);
  return CRYPTO_memcmp(expected.data(), token.data() + 4, expected.size()) == 0;
}

}  // namespace ncast::proto
