// The batched GPU decoder gives back the sources: random generations coded on the CPU with random
// (full-rank) coefficient matrices, decoded together on the device into poisoned outputs; singular
// matrices are reported and leave their outputs alone.
#include "gpu/batch_decoder.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "coding/cpu_engine.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace ncast::gpu {
namespace {

using gpu::testing::from_device;
using gpu::testing::poison_bytes;
using gpu::testing::random_bytes;

std::vector<std::uint8_t> rows_of(const DeviceMatrix& m) {
  const auto all = from_device(m.cref().data, m.rows() * m.pitch());
  std::vector<std::uint8_t> out;
  for (std::size_t i = 0; i < m.rows(); ++i)
    out.insert(out.end(), all.begin() + static_cast<long>(i * m.pitch()),
               all.begin() + static_cast<long>(i * m.pitch() + m.cols()));
  return out;
}

void upload_rows(DeviceMatrix& m, const std::vector<std::uint8_t>& bytes) {
  std::vector<const std::uint8_t*> rows;
  for (std::size_t i = 0; i < m.rows(); ++i) rows.push_back(bytes.data() + i * m.cols());
  m.upload(rows.data());
  check(cudaDeviceSynchronize(), "test upload");
}

struct Generation {
  std::size_t n, len;
  std::vector<std::uint8_t> sources, coefs, payloads;
  DeviceMatrix dev_coefs, dev_payloads, dev_out;
  std::vector<std::uint8_t> poison;

  Generation(std::size_t n_, std::size_t len_, std::mt19937_64& rng, bool singular)
      : n(n_), len(len_), dev_coefs(n_, n_), dev_payloads(n_, len_), dev_out(n_, len_) {
    sources = random_bytes(n * len, rng);
    coefs = random_bytes(n * n, rng);
    if (singular) {
      if (n == 1) coefs[0] = 0;
      else std::copy_n(coefs.begin(), n, coefs.begin() + static_cast<long>(n * (n - 1)));  // last row = first
    }
    payloads.assign(n * len, 0);
    std::vector<const std::uint8_t*> src;
    std::vector<std::uint8_t*> dst;
    for (std::size_t i = 0; i < n; ++i)
      src.push_back(sources.data() + i * len), dst.push_back(payloads.data() + i * len);
    CpuEngine().multiply(coefs.data(), n, n, src.data(), dst.data(), len, false);
    upload_rows(dev_coefs, coefs);
    upload_rows(dev_payloads, payloads);
    poison = poison_bytes(n * len, rng);
    upload_rows(dev_out, poison);
  }
  DecodeJob job() { return {dev_coefs.cref(), dev_payloads.cref(), dev_out.ref()}; }
};

TEST(BatchDecoder, GivesBackTheSourcesOfEveryGeneration) {
  NCAST_REQUIRE_CUDA_DEVICE();
  std::mt19937_64 rng(8);
  std::vector<std::unique_ptr<Generation>> gens;
  for (std::size_t n : {1, 2, 17, 128, 256})
    for (std::size_t len : {1, 3, 1200, 4096}) gens.push_back(std::make_unique<Generation>(n, len, rng, false));
  // A random matrix is singular with probability about 1/256: such a job must be reported, output untouched.
  std::vector<DecodeJob> jobs;
  for (auto& g : gens) jobs.push_back(g->job());
  BatchDecoder decoder;
  const auto ok = decoder.decode(jobs, nullptr);
  ASSERT_EQ(ok.size(), gens.size());
  std::size_t decoded = 0;
  for (std::size_t i = 0; i < gens.size(); ++i) {
    SCOPED_TRACE("n=" + std::to_string(gens[i]->n) + " len=" + std::to_string(gens[i]->len));
    if (!ok[i]) {
      EXPECT_EQ(rows_of(gens[i]->dev_out), gens[i]->poison);
      continue;
    }
    EXPECT_EQ(rows_of(gens[i]->dev_out), gens[i]->sources);
    ++decoded;
  }
  EXPECT_GE(decoded, gens.size() - 2);
}

// The product is launched behind the inversion without a host round trip: a singular job is skipped
// on the device, by every product kernel.
TEST(BatchDecoder, SingularMatricesAreReportedAndLeaveOutputsAlone) {
  NCAST_REQUIRE_CUDA_DEVICE();
  std::mt19937_64 rng(9);
  for (Kernel kernel : all_kernels()) {
    SCOPED_TRACE(std::string(to_string(kernel)));
    Generation good(32, 100, rng, false), bad(32, 100, rng, true), one(1, 5, rng, true), big_bad(128, 2000, rng, true);
    const DecodeJob jobs[] = {bad.job(), good.job(), one.job(), big_bad.job()};
    const auto ok = BatchDecoder(kernel).decode(jobs, nullptr);
    EXPECT_EQ(ok, (std::vector<bool>{false, true, false, false}));
    EXPECT_EQ(rows_of(bad.dev_out), bad.poison);
    EXPECT_EQ(rows_of(one.dev_out), one.poison);
    EXPECT_EQ(rows_of(big_bad.dev_out), big_bad.poison);
    EXPECT_EQ(rows_of(good.dev_out), good.sources);
  }
}

TEST(BatchDecoder, RefusesShapesThatDoNotFit) {
  alignas(16) static std::uint8_t fake[1024];
  BatchDecoder decoder;
  const DecodeJob not_square[] = {{{fake, 2, 3, 3}, {fake, 2, 16, 16}, {fake, 2, 16, 16}}};
  EXPECT_THROW(decoder.decode(not_square, nullptr), std::invalid_argument);
  const DecodeJob too_big[] = {{{fake, 257, 257, 257}, {fake, 257, 16, 16}, {fake, 257, 16, 16}}};
  EXPECT_THROW(decoder.decode(too_big, nullptr), std::invalid_argument);
  EXPECT_TRUE(decoder.decode({}, nullptr).empty());
}

}  // namespace
}  // namespace ncast::gpu
