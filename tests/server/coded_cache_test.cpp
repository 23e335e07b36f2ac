// Coded symbols from the cache against the definition: Σ_i c_i · source_i with c drawn as
// docs/coefficients.md says and products from the independent shift-and-add multiply. Eviction under a
// small budget gives back the same bytes.
#include "server/coded_cache.hpp"

#include <gtest/gtest.h>

#include <random>

#include "coding/cpu_engine.hpp"
#include "tests/coding/gf_reference.hpp"

namespace ncast::server {
namespace {

std::vector<std::uint8_t> reference(const GenerationRef& g, std::uint32_t j) {
  std::vector<std::uint8_t> c(g.n_s), out(g.symbol_size, 0);
  rlnc::draw_coefficients(g.seeds, (g.epoch << 16) | j, g.density, c);
  for (std::size_t i = 0; i < g.n_s; ++i)
    for (std::size_t b = 0; b < g.symbol_size; ++b) out[b] ^= testing::slow_mul(c[i], g.block[i * g.symbol_size + b]);
  return out;
}

TEST(CodedCache, SymbolsMatchTheirDefinitionAndSurviveEviction) {
  std::mt19937_64 rng(11);
  CpuEngine engine;
  const std::size_t n = 20, L = 100;
  std::vector<std::uint8_t> a(n * L), b(n * L);
  for (auto* v : {&a, &b})
    for (auto& x : *v) x = static_cast<std::uint8_t>(rng());
  // Budget for two chunks only: touching a third generation evicts the least recent one.
  auto coder = make_engine_chunk_coder(engine);
  CodedCache cache(*coder, 2 * CodedCache::kChunk * L);
  const GenerationRef ga{1, a.data(), n, L, n * L, {0x0102030405060708ull, 3}, 77, rlnc::Density::dense()};
  const GenerationRef gb{2, b.data(), n, L, n * L, {0x1112131415161718ull, 4}, 78, rlnc::Density::from_fraction(0.3)};
  for (std::uint32_t j : {0u, 1u, 15u, 16u, 40u}) {
    const auto want = reference(ga, j);
    const std::uint8_t* got = cache.get(ga, j);
    EXPECT_TRUE(std::equal(want.begin(), want.end(), got)) << "a, j=" << j;
  }
  const auto want_b = reference(gb, 5);
  EXPECT_TRUE(std::equal(want_b.begin(), want_b.end(), cache.get(gb, 5)));
  EXPECT_GT(cache.stats().evictions, 0u);
  EXPECT_LE(cache.stats().bytes, 2 * CodedCache::kChunk * L);
  const auto again = reference(ga, 1);
  EXPECT_TRUE(std::equal(again.begin(), again.end(), cache.get(ga, 1)));  // coded again, identically
  const auto misses = cache.stats().misses;
  cache.get(ga, 2);  // same chunk: a hit
  EXPECT_EQ(cache.stats().misses, misses);
  EXPECT_GT(cache.stats().engine_seconds, 0.0);
  EXPECT_THROW(cache.get(ga, 65536), std::out_of_range);
}

}  // namespace
}  // namespace ncast::server
