// ncast-bench's seed-style GPU baselines (tools/bench/baselines) against the CPU engine, with the
// checks every product kernel passes (tests/gpu/product_checks.hpp): a wrong anchor would skew every
// ratio the benchmark prints.
#include "tools/bench/baselines/seed_kernels.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "tests/gpu/gpu_test_support.hpp"
#include "tests/gpu/product_checks.hpp"

namespace ncast::bench::baselines {
namespace {

using gpu::testing::NamedMultiply;

std::vector<NamedMultiply> all_multiplies() {
  std::vector<NamedMultiply> out;
  for (SeedKernel k : all_seed_kernels())
    out.push_back({std::string(to_string(k)),
                   [k](const gpu::Product& product, bool accumulate) { multiply(k, product, accumulate, nullptr); }});
  return out;
}

class SeedKernelAgreement : public ::testing::TestWithParam<std::tuple<std::size_t, std::size_t>> {};

TEST_P(SeedKernelAgreement, EverySeedKernelMatchesTheCpuEngine) {
  NCAST_REQUIRE_CUDA_DEVICE();
  const auto [n, len] = GetParam();
  gpu::testing::expect_cpu_agreement(all_multiplies(), n, len);
}

INSTANTIATE_TEST_SUITE_P(Shapes, SeedKernelAgreement,
                         ::testing::Combine(::testing::Values(1, 2, 17, 32, 128, 256),
                                            ::testing::Values(1, 3, 1200, 4096, 65536)),
                         [](const auto& info) {
                           return "n" + std::to_string(std::get<0>(info.param)) + "_L" +
                                  std::to_string(std::get<1>(info.param));
                         });

TEST(SeedKernelProducts, EveryProductMatchesTheTableFreeReference) {
  NCAST_REQUIRE_CUDA_DEVICE();
  gpu::testing::expect_every_product(all_multiplies());
}

TEST(SeedKernelProducts, NoSourcesGiveZeroOutputs) {
  NCAST_REQUIRE_CUDA_DEVICE();
  gpu::testing::expect_zero_outputs_without_sources(all_multiplies());
}

TEST(SeedKernelArguments, BadShapesAndLayoutsAreRefused) {
  // Checked before anything touches a device, so this runs everywhere.
  alignas(16) static std::uint8_t fake[4096];
  const gpu::ConstDeviceMatrixRef coefs{fake, 2, 3, 3};
  const gpu::ConstDeviceMatrixRef src{fake, 3, 64, 64};
  const gpu::DeviceMatrixRef dst{fake + 512, 2, 64, 64};
  for (SeedKernel k : all_seed_kernels()) {
    SCOPED_TRACE(std::string(to_string(k)));
    EXPECT_THROW(multiply(k, {coefs, src, {fake + 512, 3, 64, 64}}, false, nullptr), std::invalid_argument);
    EXPECT_THROW(multiply(k, {coefs, {fake + 1, 3, 64, 64}, dst}, false, nullptr), std::invalid_argument);
  }
}

TEST(SeedKernelNames, RoundTripAndStayApartFromTheEngines) {
  for (SeedKernel k : all_seed_kernels()) {
    EXPECT_EQ(parse_seed_kernel(to_string(k)), k);
    EXPECT_FALSE(gpu::parse_kernel(to_string(k))) << to_string(k);
  }
  for (gpu::Kernel k : gpu::all_kernels()) EXPECT_FALSE(parse_seed_kernel(gpu::to_string(k))) << gpu::to_string(k);
}

}  // namespace
}  // namespace ncast::bench::baselines
