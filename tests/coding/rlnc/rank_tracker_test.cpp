// The rank tracker against the real progressive decoder: the same innovation verdict and rank after
// every symbol, over source symbols, seeded dense and sparse vectors, explicit ones, and vectors that
// depend on earlier ones (combinations, duplicates, scaled copies, a subspace that never fills).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "coding/rlnc/decoder.hpp"
#include "coding/rlnc/error.hpp"
#include "coding/rlnc/rank_tracker.hpp"
#include "tests/coding/rlnc/allocation_counter.hpp"
#include "tests/coding/rlnc/rlnc_test_support.hpp"

namespace ncast::rlnc {
namespace {

using Vec = std::vector<std::uint8_t>;
constexpr std::size_t kL = 8;  // the decoder needs payloads; their bytes do not matter to the rank

bool is_zero(const Vec& v) {
  return std::all_of(v.begin(), v.end(), [](std::uint8_t x) { return x == 0; });
}

// Feeds the same vectors to a Decoder and a RankTracker, checking both agree after each one.
class Pair {
 public:
  explicit Pair(std::size_t n)
      : layout_(n, kL, n * kL),
        out_(layout_.block_bytes()),
        decoder_(layout_, out_, {7, 3}),
        tracker_(n),
        payload_(kL, 0x5A) {}

  void add(const Vec& c, std::mt19937_64& rng) {
    ++added_;
    for (auto& b : payload_) b = static_cast<std::uint8_t>(rng());
    // A unit vector goes to the decoder as a source symbol, half the time, as a receiver hands it over.
    const auto one = std::find(c.begin(), c.end(), std::uint8_t{1});
    const bool unit =
        one != c.end() && std::count(c.begin(), c.end(), std::uint8_t{0}) + 1 == static_cast<long>(c.size());
    const SymbolView symbol =
        unit && rng() % 2
            ? SymbolView{SymbolKind::systematic, static_cast<std::uint32_t>(one - c.begin()), {}, {}, payload_}
            : SymbolView{SymbolKind::coded, 0, {}, c, payload_};
    const AddResult expected = decoder_.add(symbol);
    ASSERT_EQ(tracker_.add(c), expected) << "symbol " << added_ << " of n=" << layout_.n();
    ASSERT_EQ(tracker_.rank(), decoder_.rank()) << "symbol " << added_ << " of n=" << layout_.n();
    ASSERT_EQ(tracker_.complete(), decoder_.complete());
  }

  const RankTracker& tracker() const { return tracker_; }

 private:
  GenerationLayout layout_;
  Vec out_;
  Decoder decoder_;
  RankTracker tracker_;
  Vec payload_;
  std::size_t added_ = 0;
};

Vec seeded(std::size_t n, std::uint32_t index, Density density) {
  Vec c(n);
  draw_coefficients({7, 3}, index, density, c);
  return c;
}

// a·x + b·y, byte by byte with the reference multiplication.
Vec combine(const Vec& x, std::uint8_t a, const Vec& y, std::uint8_t b) {
  Vec c(x.size());
  for (std::size_t j = 0; j < c.size(); ++j) c[j] = testing::slow_mul(a, x[j]) ^ testing::slow_mul(b, y[j]);
  return c;
}

// One random vector of a mix of kinds, most of them innovative until the rank is near n.
Vec next_vector(std::size_t n, const std::vector<Vec>& sent, std::uint32_t& index, std::mt19937_64& rng) {
  const unsigned pick = static_cast<unsigned>(rng() % 6);
  Vec c(n, 0);
  if (pick == 0) {
    c[rng() % n] = 1;  // a source symbol
  } else if (pick == 1) {
    c = seeded(n, index++, Density::dense());
  } else if (pick == 2) {
    c = seeded(n, index++, Density::from_fraction(2.0 / static_cast<double>(n)));
  } else if (pick == 3 && !sent.empty()) {
    c = combine(sent[rng() % sent.size()], static_cast<std::uint8_t>(rng() | 1), sent[rng() % sent.size()],
                static_cast<std::uint8_t>(rng()));  // dependent (or zero, then skipped)
  } else if (pick == 4 && !sent.empty()) {
    c = sent[rng() % sent.size()];  // a duplicate
  } else {
    for (auto& v : c) v = rng() % 4 == 0 ? static_cast<std::uint8_t>(rng()) : 0;
  }
  return c;
}

TEST(RankTracker, AgreesWithTheDecoderOnMixedSymbols) {
  std::mt19937_64 rng(2026);
  for (const std::size_t n : {1, 2, 3, 16, 32, 100, 128, 255, 256}) {
    Pair pair(n);
    std::vector<Vec> sent;
    std::uint32_t index = 0;
    // Until full rank and a little beyond: everything after completion is non-innovative.
    for (std::size_t extra = 0; extra < 8;) {
      const Vec c = next_vector(n, sent, index, rng);
      if (is_zero(c)) continue;
      ASSERT_NO_FATAL_FAILURE(pair.add(c, rng));
      sent.push_back(c);
      extra += pair.tracker().complete();
    }
  }
}

// Vectors drawn from a k-dimensional subspace: the rank stops at k, and every vector after that is a
// dependent one that a wrong elimination would take as innovative.
TEST(RankTracker, AgreesWithTheDecoderInASubspaceThatNeverFills) {
  std::mt19937_64 rng(17);
  for (const std::size_t n : {8, 64, 128}) {
    const std::size_t k = n / 2 + 1;
    std::vector<Vec> basis;
    for (std::size_t i = 0; i < k; ++i) basis.push_back(testing::random_bytes(n, rng));
    Pair pair(n);
    for (std::size_t s = 0; s < 3 * n; ++s) {
      Vec c(n, 0);
      for (const Vec& b : basis) c = combine(c, 1, b, rng() % 3 ? static_cast<std::uint8_t>(rng()) : 0);
      if (is_zero(c)) continue;
      ASSERT_NO_FATAL_FAILURE(pair.add(c, rng));
    }
    EXPECT_EQ(pair.tracker().rank(), k);  // the basis, random, is independent (but for odds of 256^-(n-k))
  }
}

TEST(RankTracker, ZeroVectorsAndEverythingAtFullRankAreNotInnovative) {
  RankTracker t(3);
  EXPECT_EQ(t.add(Vec{0, 0, 0}), AddResult::non_innovative);
  EXPECT_EQ(t.add(Vec{0, 5, 0}), AddResult::innovative);
  EXPECT_EQ(t.add(Vec{0, 1, 0}), AddResult::non_innovative);
  EXPECT_EQ(t.add(Vec{1, 2, 3}), AddResult::innovative);
  EXPECT_EQ(t.add(Vec{0, 0, 9}), AddResult::innovative);
  EXPECT_TRUE(t.complete());
  EXPECT_EQ(t.add(Vec{4, 4, 4}), AddResult::non_innovative);
  t.reset();
  EXPECT_EQ(t.rank(), 0u);
  EXPECT_EQ(t.add(Vec{0, 1, 0}), AddResult::innovative);
}

TEST(RankTracker, RefusesWrongSizes) {
  EXPECT_THROW(RankTracker(0), Error);
  EXPECT_THROW(RankTracker(257), Error);
  RankTracker t(4);
  EXPECT_THROW(t.add(Vec{1, 2, 3}), Error);
  EXPECT_EQ(t.rank(), 0u);
}

TEST(RankTracker, AddingVectorsAllocatesNothing) {
  std::vector<Vec> vectors;
  for (std::uint32_t i = 0; i < 140; ++i) vectors.push_back(seeded(128, i, Density::dense()));
  RankTracker t(128);
  for (const auto& v : vectors) t.add(v);  // warms the kernels' per-thread scratch
  t.reset();
  const std::size_t before = testing::allocations();
  for (const auto& v : vectors) t.add(v);
  EXPECT_EQ(testing::allocations() - before, 0u);
  EXPECT_TRUE(t.complete());
}

}  // namespace
}  // namespace ncast::rlnc
