// The installed C++ header (<ncast/ncast_rs.hpp>) over the C API: the same bytes as the in-tree codec,
// every failure an exception with the C status, and handles that are safe to move.
#include <ncast/ncast_rs.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "coding/rs/codec.hpp"
#include "tests/coding/rs/rs_test_support.hpp"

namespace {

using ncast::RsCodec;
using ncast::RsError;
using ncast::RsOptions;
using ncast::testing::Bytes;
using ncast::testing::TestStripe;

static_assert(!std::is_copy_constructible_v<RsCodec> && std::is_nothrow_move_constructible_v<RsCodec>);
static_assert(!std::is_copy_constructible_v<ncast::RsBuffer> && std::is_nothrow_move_constructible_v<ncast::RsBuffer>);

// Runs fn, which must throw an RsError of the given status whose message carries the C library's.
template <class Fn>
void expect_status(Fn&& fn, ncast_rs_status status, const std::string& call) {
  try {
    fn();
    ADD_FAILURE() << call << " did not throw";
  } catch (const RsError& e) {
    EXPECT_EQ(e.status(), status) << e.what();
    const std::string what = e.what();
    EXPECT_EQ(what.rfind(call + ": ", 0), 0U) << what;
    EXPECT_NE(what.find(ncast_rs_status_string(status)), std::string::npos) << what;
  }
}

TEST(CppApi, EncodeEqualsTheInTreeCodecAndReconstructGivesBackTheShards) {
  std::mt19937_64 rng(81);
  const unsigned k = 10, m = 4;
  const std::size_t len = 1031;
  const RsCodec codec(k, m);
  EXPECT_EQ(codec.data_shards(), k);
  EXPECT_EQ(codec.parity_shards(), m);
  EXPECT_EQ(codec.total_shards(), k + m);
  EXPECT_FALSE(codec.backend_description().empty());
  EXPECT_EQ(ncast::rs_version(), ncast_rs_version());

  const ncast::rs::Codec reference(k, m, {.backend = ncast::Backend::cpu});
  const auto rows = reference.parity_matrix().bytes();
  EXPECT_EQ(codec.parity_matrix(), Bytes(rows.begin(), rows.end()));

  TestStripe s(k, m, len, rng);
  TestStripe want = s;
  reference.encode(want.pointers(), len);
  const auto ptrs = s.pointers();
  codec.encode(std::span(ptrs), len);
  ASSERT_EQ(s.shards, want.shards);
  EXPECT_TRUE(codec.verify(ptrs, len));

  const std::vector<unsigned> lost{0, 3, 10, 13};
  for (unsigned e : lost) ncast::testing::fill_random(s.shards[e], rng);
  const Bytes poisoned_0 = s.shards[0];
  codec.reconstruct(ptrs, len, lost, {3});
  EXPECT_EQ(s.shards[3], want.shards[3]);
  EXPECT_EQ(s.shards[0], poisoned_0);
  EXPECT_FALSE(codec.verify(ptrs, len));
  codec.reconstruct(ptrs, len, lost);
  EXPECT_EQ(s.shards, want.shards);
}

TEST(CppApi, BatchProgressiveAndUpdateAgreeWithEncode) {
  std::mt19937_64 rng(82);
  const unsigned k = 5, m = 3;
  const std::size_t len = 300, stripes = 4;
  RsOptions options;
  options.matrix = ncast::RsMatrix::vandermonde;
  options.decode_cache_capacity = 0;
  const RsCodec codec(k, m, options);
  const ncast::rs::Codec reference(k, m, {.matrix = ncast::rs::MatrixKind::vandermonde});

  std::vector<TestStripe> each, want;
  std::vector<std::uint8_t*> all;
  for (std::size_t i = 0; i < stripes; ++i) each.emplace_back(k, m, len, rng);
  for (auto& s : each) {
    want.push_back(s);
    reference.encode(want.back().pointers(), len);
    for (auto* p : s.pointers()) all.push_back(p);
  }
  codec.encode_batch(all, len);
  for (std::size_t i = 0; i < stripes; ++i) ASSERT_EQ(each[i].shards, want[i].shards) << "stripe " << i;

  const std::vector<unsigned> lost{1, 4, 6};
  for (auto& s : each)
    for (unsigned e : lost) ncast::testing::fill_random(s.shards[e], rng);
  codec.reconstruct_batch(all, len, lost);
  for (std::size_t i = 0; i < stripes; ++i) ASSERT_EQ(each[i].shards, want[i].shards) << "stripe " << i;

  // Progressive encoding into zeroed parity, then an update of shard 2 patched from the change.
  TestStripe& s = each[0];
  std::vector<std::uint8_t*> parity(all.begin() + k, all.begin() + k + m);
  for (unsigned p = 0; p < m; ++p) std::fill(s.shards[k + p].begin(), s.shards[k + p].end(), 0);
  for (unsigned j = 0; j < k; ++j) codec.encode_one(j, s.shards[j].data(), parity, len);
  EXPECT_EQ(s.shards, want[0].shards);
  const Bytes fresh = ncast::testing::random_bytes(len, rng);
  codec.update(2, s.shards[2].data(), fresh.data(), parity, len);
  std::copy(fresh.begin(), fresh.end(), s.shards[2].begin());
  EXPECT_TRUE(codec.verify({all.data(), k + m}, len));
}

TEST(CppApi, FailuresThrowTheirStatusWithTheLibrarysReason) {
  expect_status([] { RsCodec(0, 2); }, NCAST_RS_ERR_INVALID, "ncast_rs_create");
  expect_status([] { RsCodec(250, 7); }, NCAST_RS_ERR_INVALID, "ncast_rs_create");
  RsOptions bad_matrix;
  bad_matrix.matrix = ncast::RsMatrix::custom;
  bad_matrix.custom_parity.assign(5, 1);
  expect_status([&] { RsCodec(3, 2, bad_matrix); }, NCAST_RS_ERR_INVALID, "ncast_rs_create");
#ifndef NCAST_TEST_HAVE_CUDA
  RsOptions cuda;
  cuda.backend = ncast::RsBackend::cuda;
  expect_status([&] { RsCodec(3, 2, cuda); }, NCAST_RS_ERR_BACKEND, "ncast_rs_create");
#endif

  std::mt19937_64 rng(83);
  const unsigned k = 4, m = 2;
  const std::size_t len = 64;
  const RsCodec codec(k, m);
  TestStripe s(k, m, len, rng);
  auto ptrs = s.pointers();
  codec.encode(ptrs, len);
  const TestStripe encoded = s;
  // Counts the C API cannot check: it would use the first k + m of too many pointers and go on.
  std::vector<std::uint8_t*> long_list = ptrs;
  long_list.push_back(s.shards[0].data());
  expect_status([&] { codec.encode(long_list, len); }, NCAST_RS_ERR_INVALID, "ncast_rs_encode");
  expect_status([&] { codec.encode_batch(long_list, len); }, NCAST_RS_ERR_INVALID, "ncast_rs_encode_batch");
  expect_status([&] { (void)codec.verify(long_list, len); }, NCAST_RS_ERR_INVALID, "ncast_rs_verify");
  const std::vector<std::uint8_t*> parity(ptrs.begin() + k, ptrs.end());
  const std::vector<std::uint8_t*> parity_and_one(ptrs.begin() + k - 1, ptrs.end());
  const std::uint8_t* data = s.shards[0].data();
  expect_status([&] { codec.update(0, data, data, parity_and_one, len); }, NCAST_RS_ERR_INVALID, "ncast_rs_update");
  expect_status([&] { codec.encode_one(0, data, parity_and_one, len); }, NCAST_RS_ERR_INVALID, "ncast_rs_encode_one");
  // Arguments only the library can judge.
  expect_status([&] { codec.reconstruct(ptrs, len, {9}); }, NCAST_RS_ERR_INVALID, "ncast_rs_reconstruct");
  expect_status([&] { codec.encode_one(7, data, parity, len); }, NCAST_RS_ERR_INVALID, "ncast_rs_encode_one");
  expect_status([&] { codec.update(0, nullptr, data, parity, len); }, NCAST_RS_ERR_INVALID, "ncast_rs_update");

  expect_status([&] { codec.reconstruct(ptrs, len, {0, 1, 2}); }, NCAST_RS_ERR_UNRECOVERABLE, "ncast_rs_reconstruct");
  EXPECT_THROW(codec.reconstruct_batch(ptrs, len, {0, 1, 5}), ncast::RsUnrecoverable);
  EXPECT_EQ(s.shards, encoded.shards);
  try {
    codec.reconstruct(ptrs, len, {0, 1, 2});
    ADD_FAILURE() << "three losses of 4+2 did not throw";
  } catch (const RsError& e) {
    EXPECT_NE(std::string(e.what()).find(ncast_rs_last_error()), std::string::npos) << e.what();
    EXPECT_NE(std::string(ncast_rs_last_error()), "");
  }
}

TEST(CppApi, MovedFromHandlesAreSafeAndBuffersFollowTheirCodec) {
  RsCodec a(6, 3);
  ncast::RsBuffer buffer = a.alloc(9 * 128);
  ASSERT_NE(buffer.data(), nullptr);
  EXPECT_EQ(buffer.size(), 9U * 128);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(buffer.data()) % 64, 0U);

  RsCodec b(std::move(a));
  EXPECT_NE(b.native_handle(), nullptr);
  // NOLINTNEXTLINE(bugprone-use-after-move): the moved-from state is what is tested
  EXPECT_EQ(a.native_handle(), nullptr);
  EXPECT_EQ(a.data_shards(), 0U);
  std::vector<std::uint8_t*> shards;
  for (std::size_t i = 0; i < 9; ++i) shards.push_back(buffer.data() + i * 128);
  expect_status([&] { a.encode(shards, 128); }, NCAST_RS_ERR_INVALID, "ncast_rs_encode");
  expect_status([&] { (void)a.alloc(16); }, NCAST_RS_ERR_INVALID, "ncast_rs_alloc");

  // The buffer came from a's handle, which b now owns: still usable, freed before b goes.
  for (std::size_t i = 0; i < buffer.size(); ++i) buffer.data()[i] = static_cast<std::uint8_t>(i * 7);
  b.encode(shards, 128);
  EXPECT_TRUE(b.verify(shards, 128));

  ncast::RsBuffer moved = std::move(buffer);
  EXPECT_EQ(buffer.data(), nullptr);  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(moved.size(), 9U * 128);
  moved = b.alloc(32);
  EXPECT_EQ(moved.size(), 32U);

  a = RsCodec(2, 1);  // a moved-from codec can be given a new one
  EXPECT_EQ(a.total_shards(), 3U);
}

TEST(CppApi, CustomMatrixIsUsedAndADependentOneIsUnrecoverable) {
  std::mt19937_64 rng(84);
  const unsigned k = 3, m = 2;
  const std::size_t len = 100;
  RsOptions options;
  options.matrix = ncast::RsMatrix::custom;
  options.custom_parity = {1, 1, 1, 1, 2, 4};  // XOR parity and a Vandermonde row: MDS for 3+2
  const RsCodec codec(k, m, options);
  EXPECT_EQ(codec.parity_matrix(), options.custom_parity);

  TestStripe s(k, m, len, rng);
  const auto ptrs = s.pointers();
  codec.encode(ptrs, len);
  for (std::size_t b = 0; b < len; ++b)
    ASSERT_EQ(s.shards[3][b], s.shards[0][b] ^ s.shards[1][b] ^ s.shards[2][b]) << "byte " << b;
  const TestStripe encoded = s;
  codec.reconstruct(ptrs, len, {0, 2});
  EXPECT_EQ(s.shards, encoded.shards);

  options.custom_parity = {1, 1, 1, 1, 1, 1};  // two equal rows: losing two data shards cannot be undone
  const RsCodec dependent(k, m, options);
  expect_status([&] { dependent.reconstruct(ptrs, len, {0, 1}); }, NCAST_RS_ERR_UNRECOVERABLE, "ncast_rs_reconstruct");
}

}  // namespace
