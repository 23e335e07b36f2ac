// The tensor-core kernel (Kernel::tensor_b1) against the CPU engine on random data with poisoned
// outputs, over the shapes its tiling has edges at: each of its three output shapes (≤ 4, ≤ 8 and
// groups of 16 outputs, up to 8 groups a block), source counts that are not multiples of its
// 32-source steps, above its 256-source slice, lengths that end inside a 4-byte word, a pass of
// 128 / 256 / 512 positions and a block's two warpgroups; plain and accumulating; and in batches with
// skipped products; long rows that wrap the ring of asynchronously fetched sources.
#include <gtest/gtest.h>

#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "coding/cpu_engine.hpp"
#include "gpu/device_info.hpp"
#include "gpu/device_memory.hpp"
#include "gpu/gf_kernel.hpp"
#include "tests/coding/gf_reference.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace ncast::gpu {
namespace {

using gpu::testing::from_device;
using gpu::testing::poison_bytes;
using gpu::testing::PoisonedMatrix;
using gpu::testing::random_bytes;
using gpu::testing::random_coef;
using gpu::testing::to_device;

struct Case {
  std::size_t m, k, len;
};

// One product, plain then accumulating, compared with the CPU engine byte for byte.
void expect_agreement(const Case& c, std::mt19937_64& rng, CpuEngine& cpu) {
  SCOPED_TRACE("m=" + std::to_string(c.m) + " k=" + std::to_string(c.k) + " len=" + std::to_string(c.len));
  std::vector<std::uint8_t> coefs(c.m * c.k);
  for (auto& x : coefs) x = random_coef(rng);
  std::vector<std::vector<std::uint8_t>> srcs(c.k);
  std::vector<const std::uint8_t*> src_ptrs;
  for (auto& s : srcs) s = random_bytes(c.len, rng), src_ptrs.push_back(s.data());
  const std::size_t coef_pitch = c.k + 5;  // coefficients have no layout rule
  std::vector<std::uint8_t> coef_rows = poison_bytes(c.m * coef_pitch + 1, rng);
  for (std::size_t i = 0; i < c.m; ++i)
    std::copy(coefs.begin() + static_cast<long>(i * c.k), coefs.begin() + static_cast<long>((i + 1) * c.k),
              coef_rows.begin() + static_cast<long>(i * coef_pitch + 1));  // and start at an odd address
  DeviceBuffer coef_buf(coef_rows.size(), "test coefficients");
  to_device(coef_buf.get(), coef_rows);
  PoisonedMatrix src(c.k, c.len, rng);
  src.set_rows(srcs);

  for (bool accumulate : {false, true}) {
    std::vector<std::vector<std::uint8_t>> start(c.m), want(c.m);
    std::vector<std::uint8_t*> want_ptrs;
    for (std::size_t i = 0; i < c.m; ++i) {
      start[i] = random_bytes(c.len, rng);
      want[i] = accumulate ? start[i] : poison_bytes(c.len, rng);
      want_ptrs.push_back(want[i].data());
    }
    cpu.multiply(coefs.data(), c.m, c.k, src_ptrs.data(), want_ptrs.data(), c.len, accumulate);
    PoisonedMatrix dst(c.m, c.len, rng);
    if (accumulate) dst.set_rows(start);
    multiply(Kernel::tensor_b1, {{coef_buf.get() + 1, c.m, c.k, coef_pitch}, src.ref(), dst.ref()}, accumulate,
             nullptr);
    check(cudaDeviceSynchronize(), "running the tensor kernel");
    const auto all = from_device(dst.buffer.get(), dst.buffer.size());
    for (std::size_t i = 0; i < c.m; ++i)
      ASSERT_EQ(dst.row(all, i), want[i]) << "output row " << i << (accumulate ? " (accumulate)" : "");
    ASSERT_TRUE(dst.outside_untouched(all)) << "a byte outside the outputs changed";
    ASSERT_EQ(from_device(src.buffer.get(), src.buffer.size()), src.initial) << "the sources changed";
  }
}

TEST(TensorKernel, RunsItselfOnHopper) {
  NCAST_REQUIRE_CUDA_DEVICE();
  int device = 0;
  check(cudaGetDevice(&device), "reading the current device");
  for (const DeviceInfo& d : usable_devices()) {
    if (d.index == device && d.major == 9 && d.minor == 0) {
      EXPECT_TRUE(tensor_kernel_available()) << "an sm_90 device without the sm_90a image: the build lost it";
    }
  }
}

TEST(TensorKernel, MatchesTheCpuEngineOnOddShapes) {
  NCAST_REQUIRE_CUDA_DEVICE();
  std::mt19937_64 rng(21);
  CpuEngine cpu;
  const Case cases[] = {
      {1, 1, 1},        {3, 10, 1000},   {4, 10, 4097},    {4, 1, 513},    {5, 17, 777},    {8, 32, 2049},
      {8, 40, 255},     {9, 7, 3},       {16, 31, 129},    {17, 33, 1201}, {37, 128, 4096}, {100, 100, 333},
      {128, 128, 4100}, {129, 63, 1025}, {300, 129, 3000}, {40, 255, 999}, {33, 256, 517},  {20, 257, 300},
      {7, 300, 1000},   {250, 200, 64},  {1030, 17, 129},
  };
  for (const Case& c : cases) expect_agreement(c, rng, cpu);
}

// Long rows, where each warpgroup works through more passes than the source ring has stages (the
// ring wraps, and the last passes end inside a 16-byte copy): RS-like shapes of 4 and 8 outputs,
// and a group-pipelined product of 16 outputs.
TEST(TensorKernel, MatchesTheCpuEngineOnLongRows) {
  NCAST_REQUIRE_CUDA_DEVICE();
  std::mt19937_64 rng(24);
  CpuEngine cpu;
  const Case cases[] = {{8, 32, 600'001}, {4, 10, 1'100'005}, {7, 29, 400'003}, {16, 32, 300'007}};
  for (const Case& c : cases) expect_agreement(c, rng, cpu);
}

TEST(TensorKernel, EveryProductMatchesTheTableFreeReference) {
  NCAST_REQUIRE_CUDA_DEVICE();
  // Output c, source x: every one of the 65536 products, as in the other kernels' test.
  constexpr std::size_t kLen = 259;
  std::mt19937_64 rng(22);
  std::vector<std::uint8_t> coefs(256), row(kLen);
  for (unsigned c = 0; c < 256; ++c) coefs[c] = static_cast<std::uint8_t>(c);
  for (std::size_t x = 0; x < kLen; ++x) row[x] = static_cast<std::uint8_t>(x);
  DeviceBuffer coef_buf(256, "test coefficients");
  to_device(coef_buf.get(), coefs);
  PoisonedMatrix src(1, kLen, rng), dst(256, kLen, rng);
  src.set_rows({row});
  multiply(Kernel::tensor_b1, {{coef_buf.get(), 256, 1, 1}, src.ref(), dst.ref()}, false, nullptr);
  check(cudaDeviceSynchronize(), "running the tensor kernel");
  const auto all = from_device(dst.buffer.get(), dst.buffer.size());
  for (unsigned c = 0; c < 256; ++c) {
    const auto got = dst.row(all, c);
    for (std::size_t x = 0; x < kLen; ++x)
      ASSERT_EQ(got[x], ncast::testing::slow_mul(static_cast<std::uint8_t>(c), row[x])) << "c=" << c << " x=" << x;
  }
}

// A batch of generations as the decoder runs them, one with its skip flag set (left alone), and
// products of other shapes among them.
TEST(TensorKernel, BatchesWithSkippedProducts) {
  NCAST_REQUIRE_CUDA_DEVICE();
  std::mt19937_64 rng(23);
  CpuEngine cpu;
  const Case shapes[] = {{128, 128, 4096}, {128, 128, 4096}, {3, 5, 100}, {77, 33, 1500}, {128, 128, 999}};
  const std::size_t skipped = 1;
  DeviceBuffer flags(2 * sizeof(int), "test skip flags");
  const int host_flags[2] = {0, 1};
  check(cudaMemcpy(flags.get(), host_flags, sizeof host_flags, cudaMemcpyHostToDevice), "test upload");
  const int* run = reinterpret_cast<const int*>(flags.get());
  struct Product {
    DeviceBuffer coefs;
    std::unique_ptr<PoisonedMatrix> src, dst;
    std::vector<std::vector<std::uint8_t>> want;
  };
  std::vector<Product> products;
  ProductBatch batch;
  for (std::size_t p = 0; p < std::size(shapes); ++p) {
    const Case& c = shapes[p];
    Product x;
    std::vector<std::uint8_t> coefs(c.m * c.k);
    for (auto& v : coefs) v = random_coef(rng);
    x.coefs = DeviceBuffer(coefs.size(), "test coefficients");
    to_device(x.coefs.get(), coefs);
    std::vector<std::vector<std::uint8_t>> srcs(c.k);
    std::vector<const std::uint8_t*> src_ptrs;
    for (auto& s : srcs) s = random_bytes(c.len, rng), src_ptrs.push_back(s.data());
    x.src = std::make_unique<PoisonedMatrix>(c.k, c.len, rng);
    x.src->set_rows(srcs);
    x.dst = std::make_unique<PoisonedMatrix>(c.m, c.len, rng);
    x.want.resize(c.m);
    std::vector<std::uint8_t*> want_ptrs;
    for (auto& w : x.want) w = poison_bytes(c.len, rng), want_ptrs.push_back(w.data());
    cpu.multiply(coefs.data(), c.m, c.k, src_ptrs.data(), want_ptrs.data(), c.len, false);
    batch.add({{x.coefs.get(), c.m, c.k, c.k}, x.src->ref(), x.dst->ref()}, p == skipped ? run + 1 : run);
    products.push_back(std::move(x));
  }
  batch.multiply(Kernel::tensor_b1, false, nullptr);
  check(cudaDeviceSynchronize(), "running the tensor kernel");
  for (std::size_t p = 0; p < products.size(); ++p) {
    SCOPED_TRACE("product " + std::to_string(p));
    const auto all = from_device(products[p].dst->buffer.get(), products[p].dst->buffer.size());
    if (p == skipped) {
      EXPECT_EQ(all, products[p].dst->initial) << "a skipped product was written";
      continue;
    }
    for (std::size_t i = 0; i < shapes[p].m; ++i)
      ASSERT_EQ(products[p].dst->row(all, i), products[p].want[i]) << "row " << i;
    ASSERT_TRUE(products[p].dst->outside_untouched(all));
  }
}

}  // namespace
}  // namespace ncast::gpu
