// Delta updates and progressive encoding against a full re-encode; verify against single-byte damage.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <stdexcept>
#include <vector>

#include "coding/rs/codec.hpp"
#include "tests/coding/rs/rs_test_support.hpp"

namespace ncast::rs {
namespace {

using testing::Bytes;
using testing::TestStripe;

std::vector<std::uint8_t*> parity_pointers(TestStripe& s, std::size_t k) {
  auto p = s.pointers();
  return {p.begin() + static_cast<long>(k), p.end()};
}

TEST(RsUpdate, UpdateEqualsFullReencode) {
  std::mt19937_64 rng(31);
  const std::pair<std::size_t, std::size_t> codes[] = {{1, 1}, {4, 2}, {10, 4}, {32, 8}, {128, 32}};
  for (MatrixKind kind : {MatrixKind::cauchy, MatrixKind::vandermonde})
    for (auto [k, m] : codes) {
      Codec codec(k, m, {.matrix = kind});
      const std::size_t len = 1500 + k;
      TestStripe patched(k, m, len, rng);
      auto ptrs = patched.pointers();
      codec.encode(ptrs, len);
      for (int round = 0; round < 3; ++round) {
        const std::size_t j = rng() % k;
        const Bytes old_data = patched.shards[j];
        patched.shards[j] = testing::random_bytes(len, rng);
        codec.update(j, old_data.data(), patched.shards[j].data(), parity_pointers(patched, k), len);

        TestStripe reencoded = patched;
        for (std::size_t p = 0; p < m; ++p) reencoded.shards[k + p] = testing::random_bytes(len, rng);
        auto rp = reencoded.pointers();
        codec.encode(rp, len);
        ASSERT_EQ(patched.shards, reencoded.shards) << to_string(kind) << " " << k << "+" << m << " shard " << j;
      }
    }
}

TEST(RsUpdate, ProgressiveEncodeInAnyOrderEqualsEncode) {
  std::mt19937_64 rng(32);
  const std::size_t k = 12, m = 5, len = 777;
  Codec codec(k, m);
  TestStripe whole(k, m, len, rng);
  auto wp = whole.pointers();
  codec.encode(wp, len);

  TestStripe progressive = whole;
  for (std::size_t p = 0; p < m; ++p) std::fill(progressive.shards[k + p].begin(), progressive.shards[k + p].end(), 0);
  std::vector<std::size_t> order(k);
  for (std::size_t j = 0; j < k; ++j) order[j] = j;
  std::shuffle(order.begin(), order.end(), rng);
  for (std::size_t j : order) codec.encode_one(j, progressive.shards[j].data(), parity_pointers(progressive, k), len);
  EXPECT_EQ(progressive.shards, whole.shards);
}

TEST(RsUpdate, RejectsParityIndexAndNullBuffers) {
  std::mt19937_64 rng(33);
  Codec codec(3, 2);
  TestStripe s(3, 2, 32, rng);
  auto parity = parity_pointers(s, 3);
  EXPECT_THROW(codec.update(3, s.shards[0].data(), s.shards[1].data(), parity, 32), std::invalid_argument);
  EXPECT_THROW(codec.update(0, nullptr, s.shards[1].data(), parity, 32), std::invalid_argument);
  EXPECT_THROW(codec.update(0, s.shards[0].data(), nullptr, parity, 32), std::invalid_argument);
  EXPECT_THROW(codec.encode_one(0, s.shards[0].data(), std::span(parity).first(1), 32), std::invalid_argument);
}

TEST(RsVerify, DetectsEveryKindOfSingleByteDamage) {
  std::mt19937_64 rng(34);
  // Longer than verify's 64 KiB working chunk, so damage in later chunks is covered too.
  const std::size_t k = 5, m = 3, len = 150001;
  for (MatrixKind kind : {MatrixKind::cauchy, MatrixKind::vandermonde}) {
    Codec codec(k, m, {.matrix = kind});
    TestStripe s(k, m, len, rng);
    auto ptrs = s.pointers();
    codec.encode(ptrs, len);
    std::vector<const std::uint8_t*> cptrs(ptrs.begin(), ptrs.end());
    ASSERT_TRUE(codec.verify(cptrs, len));
    for (int trial = 0; trial < 20; ++trial) {
      const std::size_t shard = rng() % (k + m), at = trial == 0 ? len - 1 : rng() % len;
      const std::uint8_t flip = static_cast<std::uint8_t>(1 + rng() % 255);
      s.shards[shard][at] ^= flip;
      EXPECT_FALSE(codec.verify(cptrs, len)) << "shard " << shard << " byte " << at;
      s.shards[shard][at] ^= flip;
    }
    EXPECT_TRUE(codec.verify(cptrs, len));
  }
}

}  // namespace
}  // namespace ncast::rs
