#pragma once
// Helpers shared by the protocol tests.
#include <cstdint>
#include <random>
#include <string_view>
#include <vector>

#include "protocol/crypto.hpp"

namespace ncast::proto::testing {

inline std::vector<std::uint8_t> hex(std::string_view s) {
  auto v = from_hex(s);
  if (!v) throw std::invalid_argument("bad hex in test");
  return *v;
}

inline std::vector<std::uint8_t> random_bytes_of(std::size_t n, std::mt19937_64& rng) {
  std::vector<std::uint8_t> v(n);
  for (auto& b : v) b = static_cast<std::uint8_t>(rng());
  return v;
}

}  // namespace ncast::proto::testing
