// Generation layouts: limits, padding, true length, and cutting an object into generations.
#include "coding/rlnc/generation.hpp"

#include <gtest/gtest.h>

#include <random>

#include "coding/rlnc/error.hpp"
#include "tests/coding/rlnc/rlnc_test_support.hpp"

namespace ncast::rlnc {
namespace {

Errc error_of(auto&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.code();
  }
  ADD_FAILURE() << "no Error thrown";
  return Errc::bad_kind;
}

TEST(GenerationLayout, Limits) {
  EXPECT_NO_THROW(GenerationLayout(1, 1, 1));
  EXPECT_NO_THROW(GenerationLayout(256, 65536, 256 * 65536));
  EXPECT_EQ(error_of([] { GenerationLayout(0, 10, 1); }), Errc::bad_layout);
  EXPECT_EQ(error_of([] { GenerationLayout(257, 10, 1); }), Errc::bad_layout);
  EXPECT_EQ(error_of([] { GenerationLayout(4, 0, 1); }), Errc::bad_layout);
  EXPECT_EQ(error_of([] { GenerationLayout(4, 65537, 1); }), Errc::bad_layout);
  EXPECT_EQ(error_of([] { GenerationLayout(4, 10, 0); }), Errc::bad_layout);
  EXPECT_EQ(error_of([] { GenerationLayout(4, 10, 41); }), Errc::bad_layout);
}

TEST(GenerationLayout, ForData) {
  EXPECT_EQ(GenerationLayout::for_data(1, 1200), GenerationLayout(1, 1200, 1));
  EXPECT_EQ(GenerationLayout::for_data(1200, 1200), GenerationLayout(1, 1200, 1200));
  EXPECT_EQ(GenerationLayout::for_data(1201, 1200), GenerationLayout(2, 1200, 1201));
  EXPECT_EQ(GenerationLayout::for_data(256 * 17, 17).n(), 256u);
  EXPECT_EQ(error_of([] { GenerationLayout::for_data(256 * 17 + 1, 17); }), Errc::bad_layout);
  EXPECT_EQ(error_of([] { GenerationLayout::for_data(0, 17); }), Errc::bad_layout);
}

TEST(SplitObject, CoversTheObjectExactly) {
  for (std::size_t bytes : {0u, 1u, 4095u, 4096u, 4097u, 128u * 4096u, 128u * 4096u + 1u, 3u * 128u * 4096u - 7u}) {
    const auto slices = split_object(bytes, 128, 4096);
    std::size_t next = 0;
    for (std::size_t i = 0; i < slices.size(); ++i) {
      EXPECT_EQ(slices[i].offset, next);
      if (i + 1 < slices.size()) {
        EXPECT_EQ(slices[i].layout, GenerationLayout(128, 4096, 128 * 4096));
      }
      next += slices[i].layout.data_bytes();
    }
    EXPECT_EQ(next, bytes);
    if (!slices.empty()) {
      const auto& last = slices.back().layout;
      EXPECT_EQ(last.n(), (last.data_bytes() + 4095) / 4096) << "the last generation has no empty symbols";
    }
  }
  EXPECT_THROW(split_object(10, 0, 4096), Error);
}

TEST(SourceBlock, PadsWithZerosAndKeepsTheData) {
  std::mt19937_64 rng(5);
  const GenerationLayout layout(3, 10, 23);
  const auto data = testing::random_bytes(23, rng);
  const SourceBlock block(layout, data);
  ASSERT_EQ(block.bytes().size(), 30u);
  EXPECT_TRUE(std::equal(data.begin(), data.end(), block.bytes().begin()));
  for (std::size_t i = 23; i < 30; ++i) EXPECT_EQ(block.bytes()[i], 0) << i;
  EXPECT_EQ(block.symbol(2), block.bytes().data() + 20);
  EXPECT_EQ(error_of([&] { SourceBlock(layout, std::span(data).first(22)); }), Errc::wrong_payload_length);
}

}  // namespace
}  // namespace ncast::rlnc
