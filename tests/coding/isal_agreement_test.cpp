// ISA-L is the field's de-facto reference for 0x11D: our products and matrix encodes must equal its.
#include <gtest/gtest.h>
#include <isa-l/erasure_code.h>

#include <random>
#include <vector>

#include "coding/gf256.hpp"
#include "coding/region.hpp"

namespace ncast::gf {
namespace {

TEST(IsalAgreement, GfMulOverAllPairs) {
  for (unsigned a = 0; a < 256; ++a)
    for (unsigned b = 0; b < 256; ++b)
      ASSERT_EQ(mul(static_cast<std::uint8_t>(a), static_cast<std::uint8_t>(b)),
                ::gf_mul(static_cast<unsigned char>(a), static_cast<unsigned char>(b)))
          << a << "*" << b;
}

TEST(IsalAgreement, InverseMatchesGfInv) {
  for (unsigned a = 1; a < 256; ++a)
    ASSERT_EQ(inv(static_cast<std::uint8_t>(a)), ::gf_inv(static_cast<unsigned char>(a))) << a;
}

TEST(IsalAgreement, DotMultiMatchesEcEncodeDataOnRandomMatrices) {
  std::mt19937_64 rng(42);
  struct Shape {
    int k, m, len;
  };
  for (Shape sh : {Shape{1, 1, 64}, Shape{10, 4, 4096}, Shape{32, 8, 1000}, Shape{5, 13, 777}, Shape{50, 20, 65536},
                   Shape{128, 32, 2048}}) {
    std::vector<std::vector<std::uint8_t>> src(sh.k, std::vector<std::uint8_t>(sh.len));
    for (auto& s : src)
      for (auto& b : s) b = static_cast<std::uint8_t>(rng());
    std::vector<std::uint8_t> coefs(sh.m * sh.k);
    for (auto& c : coefs) c = static_cast<std::uint8_t>(rng());

    std::vector<unsigned char> tables(32 * sh.k * sh.m);
    ec_init_tables(sh.k, sh.m, coefs.data(), tables.data());
    std::vector<std::vector<std::uint8_t>> want(sh.m, std::vector<std::uint8_t>(sh.len));
    std::vector<unsigned char*> sp, wp;
    for (auto& s : src) sp.push_back(s.data());
    for (auto& w : want) wp.push_back(w.data());
    ec_encode_data(sh.len, sh.k, sh.m, tables.data(), sp.data(), wp.data());

    for (Level level : supported_levels()) {
      std::vector<std::vector<std::uint8_t>> got(sh.m, std::vector<std::uint8_t>(sh.len, 0xA5));
      std::vector<std::uint8_t*> gp;
      for (auto& g : got) gp.push_back(g.data());
      kernels_for(level).dot_multi(gp.data(), sh.m, sp.data(), sh.k, coefs.data(), sh.len, false);
      for (int i = 0; i < sh.m; ++i)
        ASSERT_EQ(got[i], want[i]) << to_string(level) << " k=" << sh.k << " m=" << sh.m << " output " << i;
    }
  }
}

}  // namespace
}  // namespace ncast::gf
