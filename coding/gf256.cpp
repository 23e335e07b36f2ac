#include "coding/gf256.hpp"

#include <stdexcept>

namespace ncast::gf {
namespace {

struct ProductTable {
  std::array<std::array<std::uint8_t, 256>, 256> row{};
};

consteval ProductTable make_product_table() {
  ProductTable t;
  for (unsigned c = 0; c < 256; ++c)
    for (unsigned x = 0; x < 256; ++x) t.row[c][x] = mul(static_cast<std::uint8_t>(c), static_cast<std::uint8_t>(x));
  return t;
}

constexpr ProductTable kProducts = make_product_table();

}  // namespace

std::uint8_t inv(std::uint8_t a) {
  if (a == 0) throw std::domain_error("GF(2^8): zero has no inverse");
  return kLogExp.exp[255 - kLogExp.log[a]];
}

std::uint8_t div(std::uint8_t a, std::uint8_t b) {
  if (b == 0) throw std::domain_error("GF(2^8): division by zero");
  if (a == 0) return 0;
  return kLogExp.exp[kLogExp.log[a] + 255 - kLogExp.log[b]];
}

std::uint8_t pow(std::uint8_t a, unsigned e) {
  if (e == 0) return 1;
  if (a == 0) return 0;
  return kLogExp.exp[(kLogExp.log[a] * static_cast<unsigned long long>(e)) % 255];
}

const std::uint8_t* mul_row(std::uint8_t c) { return kProducts.row[c].data(); }

}  // namespace ncast::gf
