// Philox4x32-10 against Random123's published known answers, and the cuRAND stepping against the
// closed form derived from curand_kernel.h and against the known-answer file checked on a GPU.
#include "coding/rlnc/philox.hpp"

#include <gtest/gtest.h>

#include <random>

#include "coding/rlnc/philox_avx512.hpp"
#include "coding/simd_level.hpp"
#include "tests/coding/rlnc/kat_file.hpp"

namespace ncast::rlnc {
namespace {

// Random123 (D. E. Shaw Research) examples/kat_vectors, the "philox4x32 10" lines: counter (4 words),
// key (2), expected (4).
struct Random123Vector {
  PhiloxCounter counter;
  PhiloxKey key;
  PhiloxCounter expected;
};
const Random123Vector kRandom123[] = {
    {{0x00000000, 0x00000000, 0x00000000, 0x00000000},
     {0x00000000, 0x00000000},
     {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
    {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
     {0xffffffff, 0xffffffff},
     {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
    {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
     {0xa4093822, 0x299f31d0},
     {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
};

TEST(Philox, Random123KnownAnswers) {
  for (const auto& v : kRandom123) EXPECT_EQ(philox4x32_10(v.counter, v.key), v.expected);
}

// Value t after curand_init(seed, subsequence, offset) is word (offset+t) mod 4 of the block at
// counter ((offset+t)/4 as x:y, subsequence as z:w) under key seed, as long as nothing carries past w.
std::uint32_t closed_form(std::uint64_t seed, std::uint64_t subsequence, std::uint64_t position) {
  const std::uint64_t block = position / 4;
  const PhiloxCounter ctr{static_cast<std::uint32_t>(block), static_cast<std::uint32_t>(block >> 32),
                          static_cast<std::uint32_t>(subsequence), static_cast<std::uint32_t>(subsequence >> 32)};
  return philox4x32_10(ctr, {static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32)})[position % 4];
}

TEST(Philox, BlocksAtOnceEqualBlockByBlock) {
  std::mt19937_64 rng(4);
  const bool avx512 = gf::cpu_supports(gf::Level::avx512_gfni);
  for (const std::size_t count : {1u, 3u, 15u, 16u, 17u, 40u, 65u}) {
    const PhiloxCounter counter{static_cast<std::uint32_t>(rng() >> 40), static_cast<std::uint32_t>(rng()),
                                static_cast<std::uint32_t>(rng()), static_cast<std::uint32_t>(rng())};
    const PhiloxKey key{static_cast<std::uint32_t>(rng()), static_cast<std::uint32_t>(rng())};
    std::vector<std::uint32_t> expected;
    for (std::size_t i = 0; i < count; ++i)
      for (const auto w :
           philox4x32_10({counter[0] + static_cast<std::uint32_t>(i), counter[1], counter[2], counter[3]}, key))
        expected.push_back(w);
    std::vector<std::uint32_t> got(4 * count + 4, 0xDEADBEEF);
    philox4x32_10_blocks(counter, key, count, got.data());
    EXPECT_EQ(got.back(), 0xDEADBEEFu) << "wrote past the blocks";
    got.pop_back(), got.resize(4 * count);
    EXPECT_EQ(got, expected) << "count " << count;
    if (avx512) {
      std::vector<std::uint32_t> wide(4 * count, 0);
      detail::philox4x32_10_blocks_avx512(counter, key, count, wide.data());
      EXPECT_EQ(wide, expected) << "AVX-512, count " << count;
    }
  }
}

TEST(CurandPhilox, MatchesClosedForm) {
  std::mt19937_64 rng(11);
  const std::uint64_t offsets[] = {0, 1, 2, 3, 4, 5, 4ull * 0xffffffffull - 1, 4ull * 0xffffffffull + 3, 1ull << 40};
  for (const std::uint64_t offset : offsets)
    for (int trial = 0; trial < 8; ++trial) {
      const std::uint64_t seed = rng(), subsequence = rng() >> 1;
      CurandPhilox stream(seed, subsequence, offset);
      for (std::uint64_t t = 0; t < 23; ++t)
        ASSERT_EQ(stream(), closed_form(seed, subsequence, offset + t)) << "offset " << offset << " t " << t;
    }
}

TEST(CurandPhilox, SkipaheadEqualsDrawing) {
  for (std::uint64_t skip = 0; skip < 13; ++skip) {
    CurandPhilox drawn(42, 7, 3), skipped(42, 7, 3);
    for (std::uint64_t i = 0; i < skip; ++i) drawn();
    skipped.skipahead(skip);
    for (int i = 0; i < 9; ++i) ASSERT_EQ(drawn(), skipped()) << "skip " << skip;
  }
  CurandPhilox a(42, 7, 0), b(42, 5, 0);
  b.skipahead_sequence(2);
  for (int i = 0; i < 9; ++i) ASSERT_EQ(a(), b());
}

TEST(CurandPhilox, KnownAnswerFile) {
  const auto kat = testing::read_project_kat();
  ASSERT_GE(kat.curand.size(), 10u);
  for (const auto& c : kat.curand) {
    CurandPhilox stream(c.seed, c.subsequence, c.offset);
    for (std::size_t i = 0; i < c.values.size(); ++i)
      ASSERT_EQ(stream(), c.values[i]) << std::hex << "seed " << c.seed << " subsequence " << c.subsequence << std::dec
                                       << " offset " << c.offset << " value " << i;
  }
}

}  // namespace
}  // namespace ncast::rlnc
