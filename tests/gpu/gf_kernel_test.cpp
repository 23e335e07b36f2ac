// Every GPU kernel the engine chooses from (and every compiled prmt tile) against the CPU engine on
// random data, with the outputs and the bytes around them poisoned (product_checks.hpp); every one of
// the 65536 products against a table-free reference; batches of products; the automatic choice.
#include "gpu/gf_kernel.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "coding/cpu_engine.hpp"
#include "gpu/device_memory.hpp"
#include "tests/gpu/gpu_test_support.hpp"
#include "tests/gpu/product_checks.hpp"

namespace ncast::gpu {
namespace {

using gpu::testing::expect_cpu_agreement;
using gpu::testing::expect_every_product;
using gpu::testing::expect_zero_outputs_without_sources;
using gpu::testing::from_device;
using gpu::testing::NamedMultiply;
using gpu::testing::poison_bytes;
using gpu::testing::PoisonedMatrix;
using gpu::testing::random_bytes;
using gpu::testing::random_coef;
using gpu::testing::to_device;

struct Variant {
  Kernel kernel;
  std::optional<PrmtTile> tile;
  std::string name() const {
    std::string n(to_string(kernel));
    if (tile) n.append(" ").append(std::to_string(tile->outputs)).append("x").append(std::to_string(tile->words));
    return n;
  }
};

std::vector<Variant> all_variants() {
  std::vector<Variant> out;
  for (Kernel k : all_kernels()) out.push_back({k, std::nullopt});
  for (const PrmtTile& t : prmt_tiles()) out.push_back({Kernel::prmt, t});
  return out;
}

// Every kernel and compiled tile, as the shared checks (product_checks.hpp) call them.
std::vector<NamedMultiply> all_multiplies() {
  std::vector<NamedMultiply> out;
  for (const Variant& v : all_variants())
    out.push_back({v.name(), [v](const Product& product, bool accumulate) {
                     multiply(v.kernel, product, accumulate, nullptr, v.tile);
                   }});
  return out;
}

class KernelAgreement : public ::testing::TestWithParam<std::tuple<std::size_t, std::size_t>> {};

TEST_P(KernelAgreement, EveryKernelMatchesTheCpuEngine) {
  NCAST_REQUIRE_CUDA_DEVICE();
  const auto [n, len] = GetParam();
  expect_cpu_agreement(all_multiplies(), n, len);
}

INSTANTIATE_TEST_SUITE_P(Shapes, KernelAgreement,
                         ::testing::Combine(::testing::Values(1, 2, 17, 32, 128, 256),
                                            ::testing::Values(1, 3, 1200, 4096, 65536)),
                         [](const auto& info) {
                           return "n" + std::to_string(std::get<0>(info.param)) + "_L" +
                                  std::to_string(std::get<1>(info.param));
                         });

TEST(KernelProducts, EveryProductMatchesTheTableFreeReference) {
  NCAST_REQUIRE_CUDA_DEVICE();
  expect_every_product(all_multiplies());
}

TEST(KernelBatch, ProductsOfDifferentShapesInOneLaunch) {
  NCAST_REQUIRE_CUDA_DEVICE();
  std::mt19937_64 rng(13);
  CpuEngine cpu;
  const std::size_t shapes[][3] = {{37, 128, 4096}, {1, 17, 3}, {5, 2, 1200}, {40, 256, 999}, {3, 0, 64}, {0, 4, 64}};
  struct Case {
    std::vector<std::uint8_t> coefs;
    DeviceBuffer coef_buf;
    std::unique_ptr<PoisonedMatrix> src, dst;
    std::vector<std::vector<std::uint8_t>> expect;
  };
  std::vector<Case> cases;
  for (const auto& [m, n, len] : shapes) {
    Case c;
    c.coefs.resize(m * n);
    for (auto& x : c.coefs) x = random_coef(rng);
    std::vector<std::vector<std::uint8_t>> srcs(n);
    std::vector<const std::uint8_t*> src_ptrs;
    for (auto& s : srcs) s = random_bytes(len, rng), src_ptrs.push_back(s.data());
    c.expect.resize(m);
    std::vector<std::uint8_t*> out_ptrs;
    for (auto& e : c.expect) e = poison_bytes(len, rng), out_ptrs.push_back(e.data());
    cpu.multiply(c.coefs.data(), m, n, src_ptrs.data(), out_ptrs.data(), len, false);
    c.coef_buf = DeviceBuffer(c.coefs.size(), "test coefficients");
    if (!c.coefs.empty()) to_device(c.coef_buf.get(), c.coefs);
    c.src = std::make_unique<PoisonedMatrix>(n, len, rng);
    c.src->set_rows(srcs);
    cases.push_back(std::move(c));
  }
  for (const Variant& v : all_variants()) {
    SCOPED_TRACE(v.name());
    ProductBatch batch;
    for (std::size_t i = 0; i < cases.size(); ++i) {
      const auto& [m, n, len] = shapes[i];
      cases[i].dst = std::make_unique<PoisonedMatrix>(m, len, rng);
      batch.add({{cases[i].coef_buf.get(), m, n, n}, cases[i].src->ref(), cases[i].dst->ref()});
    }
    EXPECT_EQ(batch.size(), cases.size() - 1);  // the one without outputs is dropped
    batch.multiply(v.kernel, false, nullptr, v.tile);
    check(cudaDeviceSynchronize(), "running the batch");
    for (std::size_t i = 0; i < cases.size(); ++i) {
      const auto all = from_device(cases[i].dst->buffer.get(), cases[i].dst->buffer.size());
      for (std::size_t r = 0; r < shapes[i][0]; ++r)
        ASSERT_EQ(cases[i].dst->row(all, r), cases[i].expect[r]) << "product " << i << " row " << r;
      ASSERT_TRUE(cases[i].dst->outside_untouched(all)) << "product " << i;
    }
  }
}

// The bitslice kernel's blocks hold 128 outputs (16 per warp) of a 1024-byte slab and take sources
// two per stage: several output tiles, a last tile and a last warp that are partly used, an odd
// number of sources, one source, and slabs cut short, each plain and accumulating.
TEST(KernelProducts, BitsliceTilesStagesAndTails) {
  NCAST_REQUIRE_CUDA_DEVICE();
  std::mt19937_64 rng(14);
  CpuEngine cpu;
  const std::size_t shapes[][3] = {{300, 129, 3000}, {128, 1, 1024}, {129, 2, 33}, {140, 40, 2049}};
  for (const auto& [m, k, len] : shapes) {
    SCOPED_TRACE("m=" + std::to_string(m) + " k=" + std::to_string(k) + " len=" + std::to_string(len));
    std::vector<std::uint8_t> coefs(m * k);
    for (auto& c : coefs) c = random_coef(rng);
    std::vector<std::vector<std::uint8_t>> srcs(k), start(m), want(m);
    std::vector<const std::uint8_t*> src_ptrs;
    for (auto& x : srcs) x = random_bytes(len, rng), src_ptrs.push_back(x.data());
    DeviceBuffer coef_buf(coefs.size(), "test coefficients");
    to_device(coef_buf.get(), coefs);
    PoisonedMatrix src(k, len, rng);
    src.set_rows(srcs);
    for (bool accumulate : {false, true}) {
      std::vector<std::uint8_t*> want_ptrs;
      for (std::size_t i = 0; i < m; ++i) {
        start[i] = random_bytes(len, rng);
        want[i] = accumulate ? start[i] : poison_bytes(len, rng);
        want_ptrs.push_back(want[i].data());
      }
      cpu.multiply(coefs.data(), m, k, src_ptrs.data(), want_ptrs.data(), len, accumulate);
      PoisonedMatrix dst(m, len, rng);
      if (accumulate) dst.set_rows(start);
      multiply(Kernel::bitslice, {{coef_buf.get(), m, k, k}, src.ref(), dst.ref()}, accumulate, nullptr);
      check(cudaDeviceSynchronize(), "running the kernel");
      const auto all = from_device(dst.buffer.get(), dst.buffer.size());
      for (std::size_t i = 0; i < m; ++i)
        ASSERT_EQ(dst.row(all, i), want[i]) << "output row " << i << (accumulate ? " (accumulate)" : "");
      ASSERT_TRUE(dst.outside_untouched(all));
    }
  }
}

TEST(KernelChoice, AutomaticPicksTheTensorKernelOrBitsliceWhereTheyWin) {
  NCAST_REQUIRE_CUDA_DEVICE();
  // Many outputs: the tensor kernel where the device runs it, else bitslice where its blocks fill the GPU.
  const Kernel many = tensor_kernel_available() ? Kernel::tensor_b1 : Kernel::bitslice;
  EXPECT_EQ(fastest_kernel(16384, 128, 4096), many);
  EXPECT_EQ(fastest_kernel(128, 128, 4096, 264), many);
  EXPECT_EQ(fastest_kernel(128, 128, 4096, 1), tensor_kernel_available() ? Kernel::tensor_b1 : Kernel::prmt);
  // RS parity of 8 outputs from 32 sources: the tensor kernel where the device runs it.
  EXPECT_EQ(fastest_kernel(8, 32, std::size_t{32} << 20), tensor_kernel_available() ? Kernel::tensor_b1 : Kernel::prmt);
  // Few outputs from few sources (RS 10+4), or few sources: prmt.
  EXPECT_EQ(fastest_kernel(4, 10, std::size_t{32} << 20), Kernel::prmt);
  EXPECT_EQ(fastest_kernel(8, 20, std::size_t{32} << 20), Kernel::prmt);
  EXPECT_EQ(fastest_kernel(16384, 4, 4096), Kernel::prmt);
}

TEST(KernelProducts, NoSourcesGiveZeroOutputs) {
  NCAST_REQUIRE_CUDA_DEVICE();
  expect_zero_outputs_without_sources(all_multiplies());
}

TEST(KernelArguments, BadShapesAndLayoutsAreRefused) {
  // Checked before anything touches a device, so this runs everywhere.
  alignas(16) static std::uint8_t fake[4096];
  const ConstDeviceMatrixRef coefs{fake, 2, 3, 3};
  const ConstDeviceMatrixRef src{fake, 3, 64, 64};
  DeviceMatrixRef dst{fake + 512, 2, 64, 64};
  EXPECT_THROW(multiply(Kernel::prmt, {coefs, src, {fake + 512, 3, 64, 64}}, false, nullptr), std::invalid_argument);
  EXPECT_THROW(multiply(Kernel::prmt, {coefs, {fake, 3, 63, 64}, dst}, false, nullptr), std::invalid_argument);
  EXPECT_THROW(multiply(Kernel::prmt, {coefs, {fake + 1, 3, 64, 64}, dst}, false, nullptr), std::invalid_argument);
  EXPECT_THROW(multiply(Kernel::prmt, {coefs, src, {fake + 512, 2, 64, 72}}, false, nullptr), std::invalid_argument);
  EXPECT_THROW(multiply(Kernel::prmt, {coefs, src, dst}, false, nullptr, PrmtTile{5, 4}), std::invalid_argument);
  EXPECT_THROW(multiply(Kernel::prmt, {{fake, 2, 3, 2}, src, dst}, false, nullptr), std::invalid_argument);
}

TEST(KernelNames, RoundTrip) {
  for (Kernel k : all_kernels()) EXPECT_EQ(parse_kernel(to_string(k)), k);
  EXPECT_FALSE(parse_kernel("fast"));
  EXPECT_FALSE(parse_kernel("product-table"));  // a bench baseline (tools/bench/baselines), not the engine's
  EXPECT_EQ(parse_kernel("tensor-b1"), Kernel::tensor_b1);
  EXPECT_EQ(parse_kernel("auto"), Kernel::automatic);
}

}  // namespace
}  // namespace ncast::gpu
