// Every region kernel at every level this CPU has, against a per-byte reference on random data.
#include "coding/region.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "tests/coding/gf_reference.hpp"

namespace ncast::gf {
namespace {

using testing::slow_mul;

constexpr std::size_t kGuard = 64;
const std::size_t kLengths[] = {0, 1, 2, 15, 16, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 1000, 4096, 65537};
const std::size_t kMisalign[] = {0, 1, 7, 13, 31, 63};

// A region at a chosen misalignment inside a buffer whose other bytes are poison that must survive.
class Region {
 public:
  Region(std::size_t len, std::size_t misalign, std::mt19937_64& rng)
      : len_(len), offset_(kGuard + misalign), bytes_(len + 2 * kGuard + misalign) {
    for (auto& b : bytes_) b = static_cast<std::uint8_t>(rng());
    copy_ = bytes_;
  }
  std::uint8_t* data() { return bytes_.data() + offset_; }
  std::vector<std::uint8_t> contents() const {
    return {bytes_.begin() + static_cast<long>(offset_), bytes_.begin() + static_cast<long>(offset_ + len_)};
  }
  bool guards_intact() const {
    for (std::size_t i = 0; i < bytes_.size(); ++i)
      if ((i < offset_ || i >= offset_ + len_) && bytes_[i] != copy_[i]) return false;
    return true;
  }

 private:
  std::size_t len_, offset_;
  std::vector<std::uint8_t> bytes_, copy_;
};

class RegionKernelTest : public ::testing::TestWithParam<Level> {
 protected:
  const RegionKernels& k() const { return kernels_for(GetParam()); }
  std::mt19937_64 rng{static_cast<std::uint64_t>(GetParam()) * 7919 + 1};
  std::uint8_t random_coef() {
    // 0 and 1 are special cases for some kernels; give them a fair share.
    const unsigned r = rng() % 8;
    return r == 0 ? 0 : r == 1 ? 1 : static_cast<std::uint8_t>(rng());
  }
  // dot_multi of k aligned sources into 8 aligned outputs of 1 MiB and a ragged tail each.
  void check_large_aligned_outputs(std::size_t k);
};

TEST_P(RegionKernelTest, MulAndMulAdd) {
  for (std::size_t len : kLengths)
    for (std::size_t mis : kMisalign) {
      const std::uint8_t c = random_coef();
      Region src(len, (mis * 3) % 64, rng), dst(len, mis, rng), acc(len, mis, rng);
      const auto before = acc.contents();
      k().mul(dst.data(), src.data(), c, len);
      k().mul_add(acc.data(), src.data(), c, len);
      const auto s = src.contents(), d = dst.contents(), a = acc.contents();
      for (std::size_t i = 0; i < len; ++i) {
        ASSERT_EQ(d[i], slow_mul(c, s[i])) << "mul len=" << len << " i=" << i << " c=" << int(c);
        ASSERT_EQ(a[i], before[i] ^ slow_mul(c, s[i])) << "mul_add len=" << len << " i=" << i;
      }
      ASSERT_TRUE(dst.guards_intact() && acc.guards_intact()) << "wrote outside len=" << len;
    }
}

TEST_P(RegionKernelTest, MulInPlace) {
  for (std::size_t len : kLengths) {
    Region r(len, 5, rng);
    const auto before = r.contents();
    const std::uint8_t c = static_cast<std::uint8_t>(rng() | 2);
    k().mul(r.data(), r.data(), c, len);
    const auto after = r.contents();
    for (std::size_t i = 0; i < len; ++i) ASSERT_EQ(after[i], slow_mul(c, before[i]));
  }
}

// Checks dot_multi (and dot when m == 1) for k sources and m outputs over len bytes.
void check_dot(const RegionKernels& kern, std::size_t k, std::size_t m, std::size_t len, bool accumulate, bool single,
               std::mt19937_64& rng) {
  std::vector<Region> srcs, dsts;
  for (std::size_t j = 0; j < k; ++j) srcs.emplace_back(len, (j * 11) % 64, rng);
  for (std::size_t i = 0; i < m; ++i) dsts.emplace_back(len, (i * 5 + 3) % 64, rng);
  std::vector<std::uint8_t> coefs(m * k);
  for (auto& c : coefs) c = (rng() % 10 == 0) ? static_cast<std::uint8_t>(rng() % 2) : static_cast<std::uint8_t>(rng());
  std::vector<std::vector<std::uint8_t>> before;
  before.reserve(m);
  for (auto& d : dsts) before.push_back(d.contents());
  std::vector<const std::uint8_t*> sp;
  std::vector<std::uint8_t*> dp;
  sp.reserve(k);
  dp.reserve(m);
  for (auto& s : srcs) sp.push_back(s.data());
  for (auto& d : dsts) dp.push_back(d.data());

  if (single) kern.dot(dp[0], sp.data(), coefs.data(), k, len);
  else kern.dot_multi(dp.data(), m, sp.data(), k, coefs.data(), len, accumulate);

  std::vector<std::vector<std::uint8_t>> s;
  s.reserve(k);
  for (auto& r : srcs) s.push_back(r.contents());
  for (std::size_t i = 0; i < m; ++i) {
    const auto got = dsts[i].contents();
    for (std::size_t b = 0; b < len; ++b) {
      std::uint8_t want = accumulate ? before[i][b] : 0;
      for (std::size_t j = 0; j < k; ++j) want ^= slow_mul(coefs[i * k + j], s[j][b]);
      ASSERT_EQ(got[b], want) << "k=" << k << " m=" << m << " len=" << len << " out=" << i << " byte=" << b
                              << (accumulate ? " accumulate" : "");
    }
    ASSERT_TRUE(dsts[i].guards_intact()) << "k=" << k << " m=" << m << " len=" << len;
  }
}

TEST_P(RegionKernelTest, DotSingleOutput) {
  for (std::size_t k : {1, 2, 3, 10, 33})
    for (std::size_t len : kLengths) check_dot(this->k(), k, 1, len, false, true, rng);
}

TEST_P(RegionKernelTest, DotMultiShapes) {
  // Output counts below, at and above the register groups of every level (4, 6 and 8) and their
  // balanced splits; outputs start as random bytes, so a kernel that fails to overwrite one is caught.
  // Lengths on both sides of 256, where AVX-512 + GFNI stops looking matrices up and expands them.
  for (std::size_t k : {1, 2, 5, 10, 32})
    for (std::size_t m : {1, 3, 4, 5, 6, 7, 8, 9, 12, 13, 17})
      for (std::size_t len : {0, 1, 31, 64, 129, 256, 257, 1000})
        for (bool acc : {false, true}) check_dot(this->k(), k, m, len, acc, false, rng);
}

TEST_P(RegionKernelTest, DotMultiSmallMatricesOfEverySize) {
  // Every source count up to 17 with every output count up to 8 (on AVX-512 + GFNI those whose matrix
  // fits in registers take a kernel each, instantiated per shape), over whole steps of 4, 2 and 1 vectors
  // and a ragged tail (4·64·3 + 64 + 17 bytes).
  for (std::size_t k = 1; k <= 17; ++k)
    for (std::size_t m = 1; m <= 8; ++m)
      for (bool acc : {false, true}) check_dot(this->k(), k, m, 4 * 64 * 3 + 64 + 17, acc, false, rng);
}

TEST_P(RegionKernelTest, DotMultiInBlocksOfSources) {
  // Up to 4 outputs from more sources than fit in registers run, on Zen 5's AVX-512 + GFNI, as blocks of
  // sources over column chunks of the outputs (2 blocks for 10+4 and 12+4, 3 for 16+4 and 17+3), each
  // block after the first accumulating: several chunks and a ragged last one, outputs poisoned or
  // accumulated into. 24+2 and 32+1 outgrow half of a 1 MiB L2 here and take the general kernel.
  for (const auto& [k, m] : {std::pair<std::size_t, std::size_t>{10, 4}, {12, 4}, {16, 4}, {17, 3}, {24, 2}, {32, 1}})
    for (bool acc : {false, true}) check_dot(this->k(), k, m, 20000 + 77, acc, false, rng);
}

TEST_P(RegionKernelTest, DotMultiSpansColumnChunks) {
  // Long regions cross the cache-blocking chunk boundaries, including a ragged last chunk.
  check_dot(k(), 10, 4, 3 * 65536 + 77, false, false, rng);
  check_dot(k(), 130, 12, 2 * 4096 + 65, true, false, rng);
  check_dot(k(), 600, 3, 1024 * 2 + 1, false, false, rng);
}

TEST_P(RegionKernelTest, DotMultiPrefetchedSources) {
  // Regions past half of L2 take the kernels that prefetch (on Zen 4 into L2, and only 16 streams beyond
  // twice L2, hence 13 sources; on Zen 5 into L1, also the kernels whose matrix stays in registers), with
  // sources in pairs and an odd one last; outputs start as poison or are accumulated into.
  for (std::size_t k : {3, 8, 9, 13})
    for (bool acc : {false, true}) check_dot(this->k(), k, 3, (1 << 18) + 33, acc, false, rng);
}

TEST_P(RegionKernelTest, DotMultiFollowsCoefficientsChangedInPlace) {
  // Kernels keep the expansion of the last matrix: the same buffer with new bytes must not reuse it.
  // (Long enough for every level to expand.)
  const std::size_t k = 3, m = 2, len = 1000;
  std::vector<std::uint8_t> src(k * len), out(m * len), coefs(m * k);
  for (auto& b : src) b = static_cast<std::uint8_t>(rng());
  const std::vector<const std::uint8_t*> sp{src.data(), src.data() + len, src.data() + 2 * len};
  std::vector<std::uint8_t*> dp{out.data(), out.data() + len};
  for (int round = 0; round < 3; ++round) {
    for (auto& c : coefs) c = static_cast<std::uint8_t>(rng());
    this->k().dot_multi(dp.data(), m, sp.data(), k, coefs.data(), len, false);
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t b = 0; b < len; ++b) {
        std::uint8_t want = 0;
        for (std::size_t j = 0; j < k; ++j) want ^= slow_mul(coefs[i * k + j], src[j * len + b]);
        ASSERT_EQ(out[i * len + b], want) << "round " << round << " out " << i << " byte " << b;
      }
  }
}

TEST_P(RegionKernelTest, DotMultiAlternatesBetweenMatrices) {
  // Kernels keep the expansions of a few recent matrices: calls that go back and forth between more
  // matrices than they keep, of one shape and of others, must each be computed with their own matrix.
  const std::size_t k_max = 6, m_max = 4, len = 1000;
  std::vector<std::uint8_t> src(k_max * len), out(m_max * len);
  for (auto& b : src) b = static_cast<std::uint8_t>(rng());
  struct Matrix {
    std::size_t m, k;
    std::vector<std::uint8_t> coefs;
  };
  std::vector<Matrix> matrices;
  for (const auto& [m, k] : {std::pair<std::size_t, std::size_t>{2, 4}, {2, 4}, {2, 4}, {4, 6}, {2, 4}, {3, 5}})
    matrices.push_back({m, k, std::vector<std::uint8_t>(m * k)});
  for (auto& mat : matrices)
    for (auto& c : mat.coefs) c = static_cast<std::uint8_t>(rng() | 1);
  std::vector<const std::uint8_t*> sp;
  for (std::size_t j = 0; j < k_max; ++j) sp.push_back(src.data() + j * len);
  std::vector<std::uint8_t*> dp;
  for (std::size_t i = 0; i < m_max; ++i) dp.push_back(out.data() + i * len);
  for (std::size_t call = 0; call < 40; ++call) {
    const Matrix& mat = matrices[call % 2 == 0 ? 0 : (call / 2) % matrices.size()];
    for (auto& b : out) b = 0xA5;  // poison
    this->k().dot_multi(dp.data(), mat.m, sp.data(), mat.k, mat.coefs.data(), len, false);
    for (std::size_t i = 0; i < mat.m; ++i)
      for (std::size_t b = 0; b < len; ++b) {
        std::uint8_t want = 0;
        for (std::size_t j = 0; j < mat.k; ++j) want ^= slow_mul(mat.coefs[i * mat.k + j], src[j * len + b]);
        ASSERT_EQ(out[i * len + b], want) << "call " << call << " out " << i << " byte " << b;
      }
  }
}

TEST_P(RegionKernelTest, DotMultiTellsApartMatricesThatBeginAlike) {
  // The kernels tell their cached matrices apart by shape and first 8 coefficients before comparing the
  // rest: matrices of one shape that differ only after those must still each be computed with their own.
  const std::size_t k = 5, m = 3, len = 1000;
  std::vector<std::uint8_t> src(k * len), out(m * len);
  for (auto& b : src) b = static_cast<std::uint8_t>(rng());
  std::vector<std::vector<std::uint8_t>> matrices(3, std::vector<std::uint8_t>(m * k));
  for (auto& c : matrices[0]) c = static_cast<std::uint8_t>(rng() | 1);
  for (std::size_t v = 1; v < matrices.size(); ++v) {
    matrices[v] = matrices[0];
    matrices[v][8 + v] ^= 0x5A;
  }
  std::vector<const std::uint8_t*> sp;
  for (std::size_t j = 0; j < k; ++j) sp.push_back(src.data() + j * len);
  std::vector<std::uint8_t*> dp;
  for (std::size_t i = 0; i < m; ++i) dp.push_back(out.data() + i * len);
  for (std::size_t call = 0; call < 9; ++call) {
    const std::vector<std::uint8_t>& coefs = matrices[call % matrices.size()];
    this->k().dot_multi(dp.data(), m, sp.data(), k, coefs.data(), len, false);
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t b = 0; b < len; ++b) {
        std::uint8_t want = 0;
        for (std::size_t j = 0; j < k; ++j) want ^= slow_mul(coefs[i * k + j], src[j * len + b]);
        ASSERT_EQ(out[i * len + b], want) << "call " << call << " out " << i << " byte " << b;
      }
  }
}

void RegionKernelTest::check_large_aligned_outputs(std::size_t k) {
  const std::size_t m = 8, len = (1 << 20) + 64 + 17;
  auto aligned = [&](std::vector<std::uint8_t>& v) {
    v.resize(len + 64);
    for (auto& b : v) b = static_cast<std::uint8_t>(rng());
    return v.data() + (64 - reinterpret_cast<std::uintptr_t>(v.data()) % 64) % 64;
  };
  std::vector<std::vector<std::uint8_t>> src_bufs(k), dst_bufs(m);
  std::vector<const std::uint8_t*> sp;
  std::vector<std::uint8_t*> dp;
  sp.reserve(k);
  dp.reserve(m);
  for (auto& b : src_bufs) sp.push_back(aligned(b));
  for (auto& b : dst_bufs) dp.push_back(aligned(b));
  std::vector<std::uint8_t> coefs(m * k);
  for (auto& c : coefs) c = static_cast<std::uint8_t>(rng());
  this->k().dot_multi(dp.data(), m, sp.data(), k, coefs.data(), len, false);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t b = 0; b < len; ++b) {
      std::uint8_t want = 0;
      for (std::size_t j = 0; j < k; ++j) want ^= slow_mul(coefs[i * k + j], sp[j][b]);
      ASSERT_EQ(dp[i][b], want) << "k " << k << " out " << i << " byte " << b;
    }
}

TEST_P(RegionKernelTest, DotMultiLargeAlignedOutputs) {
  // Aligned outputs of 8 MiB and more in all take the streaming-store path where a level has one (on
  // AVX-512 + GFNI both the kernel whose matrix stays in registers, 2 sources, and the general one, 10);
  // they start as poison that must be overwritten, and a ragged tail follows the vector loop.
  for (const std::size_t k : {2, 10}) check_large_aligned_outputs(k);
}

TEST_P(RegionKernelTest, DotWithNoSourcesClearsOrKeeps) {
  Region d(100, 3, rng);
  const auto before = d.contents();
  std::uint8_t* dp = d.data();
  k().dot_multi(&dp, 1, nullptr, 0, nullptr, 100, true);
  EXPECT_EQ(d.contents(), before);
  k().dot_multi(&dp, 1, nullptr, 0, nullptr, 100, false);
  EXPECT_EQ(d.contents(), std::vector<std::uint8_t>(100, 0));
}

std::vector<Level> levels() { return {supported_levels().begin(), supported_levels().end()}; }

INSTANTIATE_TEST_SUITE_P(Levels, RegionKernelTest, ::testing::ValuesIn(levels()), [](const auto& info) {
  std::string n(to_string(info.param));
  for (auto& ch : n)
    if (ch == '-') ch = '_';
  return n;
});

TEST(SimdLevel, NamesRoundTrip) {
  for (Level l : {Level::scalar, Level::avx2, Level::avx2_gfni, Level::avx512_gfni})
    EXPECT_EQ(parse_level(to_string(l)), l);
  EXPECT_FALSE(parse_level("sse9"));
  EXPECT_TRUE(cpu_supports(Level::scalar));
  EXPECT_EQ(supported_levels().front(), Level::scalar);
  EXPECT_EQ(best_level(), supported_levels().back());
}

TEST(SimdLevel, UnsupportedLevelIsRefused) {
  for (Level l : {Level::avx2, Level::avx2_gfni, Level::avx512_gfni})
    if (!cpu_supports(l)) {
      EXPECT_THROW(kernels_for(l), std::runtime_error);
    }
}

// The environment variable is read once per process, so each case runs in a fresh child.
class SimdEnvTest : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST_F(SimdEnvTest, ForcesScalar) {
  EXPECT_EXIT(
      {
        setenv("NCAST_SIMD", "scalar", 1);
        std::exit(active_level() == Level::scalar && kernels().level == Level::scalar ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST_F(SimdEnvTest, UnknownLevelIsAnError) {
  EXPECT_EXIT(
      {
        setenv("NCAST_SIMD", "sse9", 1);
        try {
          active_level();
        } catch (const std::runtime_error& e) {
          std::fprintf(stderr, "%s\n", e.what());
          std::exit(3);
        }
        std::exit(0);
      },
      ::testing::ExitedWithCode(3), "NCAST_SIMD=sse9: unknown level");
}

TEST_F(SimdEnvTest, UnsetPicksTheBestLevel) {
  EXPECT_EXIT(
      {
        unsetenv("NCAST_SIMD");
        std::exit(active_level() == best_level() ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace ncast::gf
