// Coefficients drawn on the device against the known-answer file of docs/coefficients.md and against
// the CPU generator on random requests (dense, sparse, and sparse thresholds so low that the
// fall-back position is drawn); the file's raw cuRAND lines against cuRAND itself on this GPU.
#include "gpu/rlnc_coefficients.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <span>
#include <stdexcept>
#include <vector>

#include "coding/rlnc/coefficients.hpp"
#include "tests/coding/rlnc/kat_file.hpp"
#include "tests/gpu/curand_kat_kernel.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace ncast::gpu {
namespace {

using gpu::testing::from_device;
using gpu::testing::to_device;

// The known-answer file; NCAST_TEST_DATA_DIR in the environment overrides the build tree's path, for
// test binaries carried to another machine.
rlnc::testing::KatFile project_kat() {
  const char* dir = std::getenv("NCAST_TEST_DATA_DIR");
  return rlnc::testing::read_kat(std::string(dir ? dir : NCAST_TEST_DATA_DIR) + "/rlnc_coefficients_kat.txt");
}

// Draws every request on the device into a poisoned 256-column matrix and returns the rows.
std::vector<std::vector<std::uint8_t>> draw_on_device(const std::vector<CoefficientRequest>& requests) {
  DeviceBuffer dev_requests(requests.size() * sizeof(CoefficientRequest), "test requests");
  check(cudaMemcpy(dev_requests.get(), requests.data(), dev_requests.size(), cudaMemcpyHostToDevice), "test upload");
  DeviceMatrix out(requests.size(), 256);
  check(cudaMemset(out.ref().data, 0xCD, out.rows() * out.pitch()), "poisoning");
  draw_coefficients(reinterpret_cast<const CoefficientRequest*>(dev_requests.get()), requests.size(), 256, out.ref(),
                    nullptr);
  const auto all = from_device(out.ref().data, out.rows() * out.pitch());
  std::vector<std::vector<std::uint8_t>> rows;
  for (std::size_t r = 0; r < requests.size(); ++r) {
    const auto* p = all.data() + r * out.pitch();
    rows.emplace_back(p, p + requests[r].n);
    for (std::size_t b = requests[r].n; b < 256; ++b)
      if (p[b] != 0xCD) ADD_FAILURE() << "request " << r << " wrote past its n at byte " << b;
  }
  return rows;
}

TEST(GpuCoefficients, CurandOnThisGpuGivesTheFilesValues) {
  NCAST_REQUIRE_CUDA_DEVICE();
  const auto kat = project_kat();
  ASSERT_GE(kat.curand.size(), 10u);
  for (const auto& c : kat.curand)
    EXPECT_EQ(gpu::testing::curand_philox_values(c.seed, c.subsequence, c.offset, c.values.size()), c.values)
        << std::hex << "seed " << c.seed << " subsequence " << c.subsequence << std::dec << " offset " << c.offset;
}

TEST(GpuCoefficients, KnownAnswers) {
  NCAST_REQUIRE_CUDA_DEVICE();
  const auto kat = project_kat();
  ASSERT_GE(kat.coefficients.size(), 30u);
  std::vector<CoefficientRequest> requests;
  for (const auto& c : kat.coefficients)
    requests.push_back({rlnc::coefficient_seed(c.server, c.stream), c.segment, c.index, c.n, c.threshold, 0});
  const auto rows = draw_on_device(requests);
  for (std::size_t i = 0; i < rows.size(); ++i)
    EXPECT_EQ(rows[i], kat.coefficients[i].coefficients) << "known-answer line " << i;
}

TEST(GpuCoefficients, SameAsTheCpuGeneratorOnRandomRequests) {
  NCAST_REQUIRE_CUDA_DEVICE();
  std::mt19937_64 rng(17);
  std::vector<CoefficientRequest> requests;
  for (int i = 0; i < 4000; ++i) {
    const std::uint32_t kinds[] = {65536, 65536, 32768, 4096, 300, 2, 1};
    const std::uint32_t n = 1 + static_cast<std::uint32_t>(rng() % 256);
    requests.push_back({rng(), static_cast<std::uint32_t>(rng()), static_cast<std::uint32_t>(rng()), n,
                        kinds[rng() % 7], static_cast<std::uint32_t>(rng() % 10 == 0)});
    if (requests.back().unit) requests.back().index %= n;
  }
  const auto rows = draw_on_device(requests);
  for (std::size_t r = 0; r < requests.size(); ++r) {
    const auto& q = requests[r];
    std::vector<std::uint8_t> want(q.n, 0);
    if (q.unit) {
      want[q.index] = 1;
    } else {
      rlnc::draw_coefficients({q.seed, q.segment}, q.index, rlnc::Density::from_threshold(q.threshold), want);
    }
    ASSERT_EQ(rows[r], want) << "request " << r << " n " << q.n << " threshold " << q.threshold;
  }
}

TEST(GpuCoefficients, BadArgumentsAreRefused) {
  DeviceMatrixRef small{reinterpret_cast<std::uint8_t*>(16), 2, 64, 64};
  const auto* requests = reinterpret_cast<const CoefficientRequest*>(16);
  EXPECT_THROW(draw_coefficients(requests, 3, 64, small, nullptr), std::invalid_argument);
  EXPECT_THROW(draw_coefficients(requests, 2, 65, small, nullptr), std::invalid_argument);
  EXPECT_THROW(draw_coefficients(requests, 2, 0, small, nullptr), std::invalid_argument);
  EXPECT_THROW(draw_coefficients(requests, 2, 257, small, nullptr), std::invalid_argument);
}

}  // namespace
}  // namespace ncast::gpu
