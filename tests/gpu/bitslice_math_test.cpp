// The arithmetic of the bitslice kernel, checked on the host (no device needed): the plane transpose
// and its inverse, and that table lookups by the rows of a coefficient's bit matrix multiply every
// byte by it, for all 256 coefficients, against the table-free reference.
#include "gpu/bitslice.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "tests/coding/gf_reference.hpp"

namespace ncast::gpu::bitslice {
namespace {

void random_words(std::uint32_t (&w)[8], std::mt19937_64& rng) {
  for (auto& x : w) x = static_cast<std::uint32_t>(rng());
}

std::uint8_t byte_of(const std::uint32_t (&w)[8], int q) {
  return static_cast<std::uint8_t>(w[q / 4] >> (8 * (q % 4)));
}

TEST(BitsliceMath, TransposeGathersEachBitOfEveryByteIntoItsPlane) {
  std::mt19937_64 rng(1);
  for (int trial = 0; trial < 100; ++trial) {
    std::uint32_t w[8], planes[8];
    random_words(w, rng);
    std::memcpy(planes, w, sizeof w);
    transpose(planes);
    for (int b = 0; b < 8; ++b)
      for (int i = 0; i < 8; ++i)
        for (int k = 0; k < 4; ++k)
          ASSERT_EQ((planes[b] >> (8 * k + i)) & 1u, (byte_of(w, 4 * i + k) >> b) & 1u) << "plane " << b;
    transpose(planes);
    for (int i = 0; i < 8; ++i) ASSERT_EQ(planes[i], w[i]) << "transpose is not its own inverse";
  }
}

TEST(BitsliceMath, LookupsByBitMatrixRowsMultiplyEveryByte) {
  constexpr RowTable table = make_row_table();
  std::mt19937_64 rng(2);
  for (unsigned c = 0; c < 256; ++c) {
    std::uint32_t w[8], planes[8], out[8];
    random_words(w, rng);
    std::memcpy(planes, w, sizeof w);
    transpose(planes);
    for (int j = 0; j < 8; ++j)
      out[j] = combination(planes, static_cast<std::uint32_t>(table.rows[c] >> (8 * j)) & 0xFFu);
    transpose(out);
    for (int q = 0; q < 32; ++q)
      ASSERT_EQ(byte_of(out, q), ncast::testing::slow_mul(static_cast<std::uint8_t>(c), byte_of(w, q)))
          << "c=" << c << " byte " << q;
  }
}

// The kernel's shared-memory layout, emulated: four quarters per source built by build_quarter at
// lane_word + (q << 14) + (e << 8), read back through entry_address from packed bit-matrix rows; two
// sources per stage, both buffers, all 32 lanes.
TEST(BitsliceMath, TablesLaidOutAsTheKernelDoesMultiplyBothSources) {
  constexpr RowTable table = make_row_table();
  std::mt19937_64 rng(3);
  std::vector<std::uint8_t> smem(kTablesEnd);
  auto word_at = [&](std::uint32_t address) {
    EXPECT_GE(address, kTablesBegin);
    EXPECT_LE(address + 4, kTablesEnd);
    std::uint32_t v;
    std::memcpy(&v, smem.data() + address, 4);
    return v;
  };
  for (std::uint32_t buffer = 0; buffer < 2; ++buffer) {
    std::uint32_t data[2][32][8];
    for (int src = 0; src < 2; ++src)
      for (std::uint32_t lane = 0; lane < 32; ++lane) {
        random_words(data[src][lane], rng);
        std::uint32_t planes[8];
        std::memcpy(planes, data[src][lane], sizeof planes);
        transpose(planes);
        for (int q = 0; q < 4; ++q) {
          const std::uint32_t base =
              lane_word(static_cast<std::uint32_t>(src), lane, buffer) + (static_cast<std::uint32_t>(q) << 14);
          build_quarter(planes, q, [&](int e, std::uint32_t v) {
            ASSERT_GE(base + (static_cast<std::uint32_t>(e) << 8), kTablesBegin);
            ASSERT_LE(base + (static_cast<std::uint32_t>(e) << 8) + 4, kTablesEnd);
            std::memcpy(smem.data() + base + (static_cast<std::uint32_t>(e) << 8), &v, 4);
          });
        }
      }
    for (int trial = 0; trial < 64; ++trial) {
      const auto c0 = static_cast<std::uint8_t>(trial < 2 ? trial : rng()), c1 = static_cast<std::uint8_t>(rng());
      const std::uint64_t r0 = table.rows[c0], r1 = table.rows[c1];
      for (std::uint32_t lane = 0; lane < 32; ++lane) {
        std::uint32_t acc[8];
        for (int j = 0; j < 8; ++j) {
          const auto w0 = static_cast<std::uint32_t>(j < 4 ? r0 : r0 >> 32),
                     w1 = static_cast<std::uint32_t>(j < 4 ? r1 : r1 >> 32);
          acc[j] = word_at(entry_address(w0, lane_word(0, lane, buffer), j & 3)) ^
                   word_at(entry_address(w1, lane_word(1, lane, buffer), j & 3));
        }
        transpose(acc);
        for (int b = 0; b < 32; ++b)
          ASSERT_EQ(byte_of(acc, b), ncast::testing::slow_mul(c0, byte_of(data[0][lane], b)) ^
                                         ncast::testing::slow_mul(c1, byte_of(data[1][lane], b)))
              << "buffer " << buffer << " lane " << lane << " byte " << b << " c0=" << int{c0} << " c1=" << int{c1};
      }
    }
  }
}

}  // namespace
}  // namespace ncast::gpu::bitslice
