// Streaming through small slices equals coding the whole shards at once.
#include "coding/rs/stream.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "tests/coding/rs/rs_test_support.hpp"

namespace ncast::rs {
namespace {

using testing::Bytes;

TEST(RsStream, EncodeThenReconstructThroughSlicesSmallerThanTheShards) {
  std::mt19937_64 rng(61);
  const std::size_t k = 5, m = 3, slice = 4096;
  const std::uint64_t shard_size = 3 * slice + 123;
  Codec codec(k, m, {.matrix = MatrixKind::vandermonde});
  StreamCoder stream(codec, slice);
  ASSERT_EQ(stream.slice_bytes(), slice);

  testing::TestStripe whole(k, m, shard_size, rng);
  std::vector<Bytes> streamed(k + m, Bytes(shard_size, 0xEE));
  std::vector<std::uint64_t> next(k + m, 0);  // offsets must arrive in order
  stream.encode(
      shard_size,
      [&](const Slice& s) {
        for (std::size_t j = 0; j < k; ++j) {
          ASSERT_TRUE(s.active.test(j));
          std::memcpy(s.shards[j], whole.shards[j].data() + s.offset, s.len);
        }
        ASSERT_FALSE(s.active.test(k));
      },
      [&](const Slice& s) {
        for (std::size_t i = 0; i < k + m; ++i) {
          ASSERT_TRUE(s.active.test(i));
          ASSERT_EQ(s.offset, next[i]);
          next[i] += s.len;
          std::memcpy(streamed[i].data() + s.offset, s.shards[i], s.len);
        }
      });
  auto wp = whole.pointers();
  codec.encode(wp, shard_size);
  ASSERT_EQ(streamed, whole.shards);

  // Lose data shards 0 and 3 and parity 6; rebuild only the data shards.
  const std::vector<std::size_t> erased{0, 3, 6}, wanted{0, 3};
  const ShardSet sources = codec.sources_for(erased);
  std::vector<Bytes> rebuilt(k + m, Bytes(shard_size, 0xEE));
  stream.reconstruct(
      shard_size, erased, wanted,
      [&](const Slice& s) {
        ASSERT_EQ(s.active, sources);
        for (std::size_t i = 0; i < k + m; ++i)
          if (s.active.test(i)) std::memcpy(s.shards[i], streamed[i].data() + s.offset, s.len);
      },
      [&](const Slice& s) {
        ASSERT_FALSE(s.active.test(6));
        for (std::size_t i : wanted) {
          ASSERT_TRUE(s.active.test(i));
          std::memcpy(rebuilt[i].data() + s.offset, s.shards[i], s.len);
        }
      });
  for (std::size_t i : wanted) EXPECT_EQ(rebuilt[i], whole.shards[i]) << "shard " << i;
}

TEST(RsStream, EmptyShardsCallNothingAndTooManyLossesFailFirst) {
  Codec codec(4, 2);
  StreamCoder stream(codec);
  int calls = 0;
  const SliceFn count = [&](const Slice&) { ++calls; };
  stream.encode(0, count, count);
  EXPECT_EQ(calls, 0);
  const std::vector<std::size_t> lost{0, 1, 2}, none{};
  EXPECT_THROW(stream.reconstruct(1 << 20, lost, none, count, count), Unrecoverable);
  EXPECT_EQ(calls, 0);
}

TEST(RsStream, DefaultSlicesKeepMemoryBoundedForWideCodes) {
  EXPECT_EQ(StreamCoder::default_slice_bytes(14), 1u << 20);
  EXPECT_LE(StreamCoder::default_slice_bytes(256) * 256, 32u << 20);
  EXPECT_EQ(StreamCoder::default_slice_bytes(256) % 4096, 0u);
}

}  // namespace
}  // namespace ncast::rs
