// The C API: results equal to ISA-L and the C++ codec, and every failure a status plus a message.
#include "coding/rs/ncast_rs.h"

#include <gtest/gtest.h>
#include <isa-l/erasure_code.h>

#include <random>
#include <string>
#include <vector>

#include "tests/coding/rs/rs_test_support.hpp"

namespace {

using ncast::testing::Bytes;
using ncast::testing::TestStripe;

struct Handle {
  explicit Handle(unsigned k, unsigned m, const ncast_rs_options* options = nullptr) {
    status = ncast_rs_create(&codec, k, m, options);
  }
  ~Handle() { ncast_rs_destroy(codec); }
  ncast_rs* codec = nullptr;
  int status;
};

TEST(CApi, EncodeEqualsIsalAndReconstructGivesBackTheShards) {
  std::mt19937_64 rng(71);
  const unsigned k = 10, m = 4;
  const std::size_t len = 1023;
  Handle h(k, m);
  ASSERT_EQ(h.status, NCAST_RS_OK) << ncast_rs_last_error();
  EXPECT_EQ(ncast_rs_data_shards(h.codec), k);
  EXPECT_EQ(ncast_rs_parity_shards(h.codec), m);
  EXPECT_NE(std::string(ncast_rs_backend_description(h.codec)), "");

  std::vector<unsigned char> a((k + m) * k), tables(32 * k * m);
  gf_gen_cauchy1_matrix(a.data(), static_cast<int>(k + m), static_cast<int>(k));
  std::vector<std::uint8_t> rows(m * k);
  ASSERT_EQ(ncast_rs_parity_matrix(h.codec, rows.data(), rows.size()), NCAST_RS_OK);
  EXPECT_TRUE(std::equal(rows.begin(), rows.end(), a.begin() + k * k));
  EXPECT_EQ(ncast_rs_parity_matrix(h.codec, rows.data(), rows.size() - 1), NCAST_RS_ERR_INVALID);

  TestStripe s(k, m, len, rng);
  ec_init_tables(static_cast<int>(k), static_cast<int>(m), a.data() + k * k, tables.data());
  std::vector<Bytes> want(m, Bytes(len));
  std::vector<unsigned char*> in, out;
  for (unsigned j = 0; j < k; ++j) in.push_back(s.shards[j].data());
  for (auto& w : want) out.push_back(w.data());
  ec_encode_data(static_cast<int>(len), static_cast<int>(k), static_cast<int>(m), tables.data(), in.data(), out.data());

  auto ptrs = s.pointers();
  ASSERT_EQ(ncast_rs_encode(h.codec, ptrs.data(), len), NCAST_RS_OK);
  for (unsigned p = 0; p < m; ++p) ASSERT_EQ(s.shards[k + p], want[p]);
  const TestStripe original = s;

  const unsigned lost[] = {1, 2, 11, 13};
  for (unsigned e : lost) ncast::testing::fill_random(s.shards[e], rng);
  const unsigned only[] = {2};
  const Bytes poisoned_1 = s.shards[1];
  ASSERT_EQ(ncast_rs_reconstruct(h.codec, ptrs.data(), len, lost, 4, only, 1), NCAST_RS_OK);
  EXPECT_EQ(s.shards[2], original.shards[2]);
  EXPECT_EQ(s.shards[1], poisoned_1);
  ASSERT_EQ(ncast_rs_reconstruct(h.codec, ptrs.data(), len, lost, 4, nullptr, 0), NCAST_RS_OK);
  EXPECT_EQ(s.shards, original.shards);

  int consistent = -1;
  std::vector<const std::uint8_t*> cptrs(ptrs.begin(), ptrs.end());
  ASSERT_EQ(ncast_rs_verify(h.codec, cptrs.data(), len, &consistent), NCAST_RS_OK);
  EXPECT_EQ(consistent, 1);
  s.shards[12][500] ^= 1;
  ASSERT_EQ(ncast_rs_verify(h.codec, cptrs.data(), len, &consistent), NCAST_RS_OK);
  EXPECT_EQ(consistent, 0);
}

TEST(CApi, BatchUpdateAndProgressiveEncodeAgreeWithEncode) {
  std::mt19937_64 rng(72);
  const unsigned k = 4, m = 3;
  const std::size_t len = 200, stripes = 3;
  ncast_rs_options o;
  ncast_rs_options_init(&o);
  o.matrix = NCAST_RS_MATRIX_VANDERMONDE;
  Handle h(k, m, &o);
  ASSERT_EQ(h.status, NCAST_RS_OK);

  std::vector<TestStripe> batch, single;
  std::vector<std::uint8_t*> all;
  for (std::size_t s = 0; s < stripes; ++s) {
    batch.emplace_back(k, m, len, rng);
    single.push_back(batch.back());
    auto sp = single.back().pointers();
    ASSERT_EQ(ncast_rs_encode(h.codec, sp.data(), len), NCAST_RS_OK);
  }
  for (auto& s : batch)
    for (auto* p : s.pointers()) all.push_back(p);
  ASSERT_EQ(ncast_rs_encode_batch(h.codec, all.data(), stripes, len), NCAST_RS_OK);
  for (std::size_t s = 0; s < stripes; ++s) ASSERT_EQ(batch[s].shards, single[s].shards);

  const unsigned lost[] = {0, 6};
  for (auto& s : batch)
    for (unsigned e : lost) ncast::testing::fill_random(s.shards[e], rng);
  ASSERT_EQ(ncast_rs_reconstruct_batch(h.codec, all.data(), stripes, len, lost, 2), NCAST_RS_OK);
  for (std::size_t s = 0; s < stripes; ++s) ASSERT_EQ(batch[s].shards, single[s].shards);

  // update: new data for shard 2 of stripe 0, compared with a fresh encode.
  TestStripe& t = batch[0];
  auto tp = t.pointers();
  const Bytes old = t.shards[2];
  ncast::testing::fill_random(t.shards[2], rng);
  ASSERT_EQ(ncast_rs_update(h.codec, 2, old.data(), t.shards[2].data(), tp.data() + k, len), NCAST_RS_OK);
  TestStripe fresh = t;
  auto fp = fresh.pointers();
  ASSERT_EQ(ncast_rs_encode(h.codec, fp.data(), len), NCAST_RS_OK);
  EXPECT_EQ(t.shards, fresh.shards);

  // encode_one from zero parity, shard by shard.
  for (unsigned p = 0; p < m; ++p) std::fill(t.shards[k + p].begin(), t.shards[k + p].end(), 0);
  for (unsigned j = 0; j < k; ++j) ASSERT_EQ(ncast_rs_encode_one(h.codec, j, tp[j], tp.data() + k, len), NCAST_RS_OK);
  EXPECT_EQ(t.shards, fresh.shards);
}

TEST(CApi, FailuresReturnAStatusAndSayWhy) {
  ncast_rs* codec = reinterpret_cast<ncast_rs*>(0x1);
  EXPECT_EQ(ncast_rs_create(&codec, 0, 2, nullptr), NCAST_RS_ERR_INVALID);
  EXPECT_EQ(codec, nullptr);
  EXPECT_NE(std::string(ncast_rs_last_error()).find("k >= 1"), std::string::npos) << ncast_rs_last_error();
  EXPECT_EQ(ncast_rs_create(&codec, 200, 57, nullptr), NCAST_RS_ERR_INVALID);
  EXPECT_EQ(ncast_rs_create(nullptr, 4, 2, nullptr), NCAST_RS_ERR_INVALID);

  ncast_rs_options o{};  // not initialised: struct_size 0
  EXPECT_EQ(ncast_rs_create(&codec, 4, 2, &o), NCAST_RS_ERR_INVALID);
  ncast_rs_options_init(&o);
  o.matrix = NCAST_RS_MATRIX_CUSTOM;  // without rows
  EXPECT_EQ(ncast_rs_create(&codec, 4, 2, &o), NCAST_RS_ERR_INVALID);
  o.matrix = 7;
  EXPECT_EQ(ncast_rs_create(&codec, 4, 2, &o), NCAST_RS_ERR_INVALID);
  o.matrix = NCAST_RS_MATRIX_CAUCHY;
  o.backend = -1;
  EXPECT_EQ(ncast_rs_create(&codec, 4, 2, &o), NCAST_RS_ERR_INVALID);

  std::mt19937_64 rng(73);
  Handle h(4, 2);
  TestStripe s(4, 2, 64, rng);
  auto ptrs = s.pointers();
  const unsigned three[] = {0, 1, 5}, outside[] = {6};
  EXPECT_EQ(ncast_rs_reconstruct(h.codec, ptrs.data(), 64, three, 3, nullptr, 0), NCAST_RS_ERR_UNRECOVERABLE);
  EXPECT_NE(std::string(ncast_rs_last_error()).find("at most 2"), std::string::npos) << ncast_rs_last_error();
  EXPECT_EQ(ncast_rs_reconstruct(h.codec, ptrs.data(), 64, outside, 1, nullptr, 0), NCAST_RS_ERR_INVALID);
  EXPECT_EQ(ncast_rs_reconstruct(h.codec, ptrs.data(), 64, nullptr, 2, nullptr, 0), NCAST_RS_ERR_INVALID);
  EXPECT_EQ(ncast_rs_encode(h.codec, nullptr, 64), NCAST_RS_ERR_INVALID);
  EXPECT_EQ(ncast_rs_encode(nullptr, ptrs.data(), 64), NCAST_RS_ERR_INVALID);
  EXPECT_EQ(ncast_rs_update(h.codec, 4, ptrs[0], ptrs[1], ptrs.data() + 4, 64), NCAST_RS_ERR_INVALID);
  EXPECT_EQ(ncast_rs_verify(h.codec, nullptr, 64, nullptr), NCAST_RS_ERR_INVALID);
  EXPECT_STREQ(ncast_rs_status_string(NCAST_RS_OK), "ok");
  EXPECT_STREQ(ncast_rs_status_string(99), "unknown status");
}

TEST(CApi, CustomMatrixIsCopiedAtCreate) {
  std::vector<std::uint8_t> rows{1, 1, 1, 1, 2, 3};  // 2 × 3
  ncast_rs_options o;
  ncast_rs_options_init(&o);
  o.matrix = NCAST_RS_MATRIX_CUSTOM;
  o.custom_parity = rows.data();
  Handle h(3, 2, &o);
  ASSERT_EQ(h.status, NCAST_RS_OK) << ncast_rs_last_error();
  rows.assign(6, 0);
  std::vector<std::uint8_t> got(6);
  ASSERT_EQ(ncast_rs_parity_matrix(h.codec, got.data(), got.size()), NCAST_RS_OK);
  EXPECT_EQ(got, (std::vector<std::uint8_t>{1, 1, 1, 1, 2, 3}));
}

TEST(CApi, VersionIsTheProjectVersion) { EXPECT_STREQ(ncast_rs_version(), NCAST_TEST_PROJECT_VERSION); }

TEST(CApi, CudaBackendIsAClearErrorWhereThereIsNone) {
  ncast_rs_options o;
  ncast_rs_options_init(&o);
  o.backend = NCAST_RS_BACKEND_CUDA;
  Handle h(4, 2, &o);
#ifdef NCAST_TEST_HAVE_CUDA
  // A CUDA build: the backend exists or the machine says why not.
  if (h.status == NCAST_RS_OK) GTEST_SKIP() << "CUDA backend available: " << ncast_rs_backend_description(h.codec);
#endif
  EXPECT_EQ(h.status, NCAST_RS_ERR_BACKEND);
  EXPECT_EQ(h.codec, nullptr);
  EXPECT_NE(std::string(ncast_rs_last_error()).find("cuda"), std::string::npos) << ncast_rs_last_error();
}

}  // namespace
