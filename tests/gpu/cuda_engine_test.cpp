// The CUDA engine behind the Engine interface: host buffers of any alignment and spacing, chunked
// over several streams, against the CPU engine; device-resident products; errors as exceptions;
// and the backend choice of make_engine().
#include "gpu/cuda_engine.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <stdexcept>
#include <vector>

#include "coding/cpu_engine.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace ncast::gpu {
namespace {

using gpu::testing::poison_bytes;
using gpu::testing::random_bytes;

// k sources and m outputs of len bytes at chosen offsets inside one host allocation (rows evenly
// spaced when `even`, so the engine's 2D-copy path runs, else scattered), outputs poisoned.
struct HostProblem {
  std::vector<std::uint8_t> coefs, arena, initial;
  std::vector<const std::uint8_t*> ins;
  std::vector<std::uint8_t*> outs;

  HostProblem(std::size_t m, std::size_t k, std::size_t len, bool even, std::mt19937_64& rng) {
    coefs = random_bytes(m * k, rng);
    const std::size_t stride = len + 7;
    std::size_t pos = 3;
    std::vector<std::size_t> offsets;
    for (std::size_t i = 0; i < m + k; ++i) {
      offsets.push_back(pos);
      pos += even ? stride : stride + rng() % 61;
    }
    arena = poison_bytes(pos + 64, rng);
    for (std::size_t j = 0; j < k; ++j) ins.push_back(arena.data() + offsets[j]);
    for (std::size_t i = 0; i < m; ++i) outs.push_back(arena.data() + offsets[k + i]);
    initial = arena;
  }
};

void expect_same_as_cpu(std::size_t m, std::size_t k, std::size_t len, bool even, bool accumulate, std::uint64_t seed) {
  SCOPED_TRACE("m=" + std::to_string(m) + " k=" + std::to_string(k) + " len=" + std::to_string(len) +
               (even ? " even rows" : " scattered rows") + (accumulate ? " accumulate" : ""));
  std::mt19937_64 rng(seed);
  HostProblem gpu_side(m, k, len, even, rng);
  HostProblem cpu_side = gpu_side;  // same bytes, its own pointers
  for (std::size_t j = 0; j < k; ++j)
    cpu_side.ins[j] = cpu_side.arena.data() + (gpu_side.ins[j] - gpu_side.arena.data());
  for (std::size_t i = 0; i < m; ++i)
    cpu_side.outs[i] = cpu_side.arena.data() + (gpu_side.outs[i] - gpu_side.arena.data());

  CudaEngine engine;
  CpuEngine cpu;
  engine.multiply(gpu_side.coefs.data(), m, k, gpu_side.ins.data(), gpu_side.outs.data(), len, accumulate);
  cpu.multiply(cpu_side.coefs.data(), m, k, cpu_side.ins.data(), cpu_side.outs.data(), len, accumulate);
  // Whole arenas: the outputs agree and every other byte (sources, gaps, guards) is unchanged.
  ASSERT_EQ(gpu_side.arena, cpu_side.arena);
  if (m > 0 && k > 0 && len > 0) {
    EXPECT_NE(gpu_side.arena, gpu_side.initial);
  }
}

TEST(CudaEngine, HostBuffersMatchTheCpuEngine) {
  NCAST_REQUIRE_CUDA_DEVICE();
  std::uint64_t seed = 1;
  for (bool even : {true, false})
    for (bool accumulate : {false, true}) {
      expect_same_as_cpu(4, 10, 1000003, even, accumulate, ++seed);   // RS-like, several chunks per lane
      expect_same_as_cpu(37, 128, 4096, even, accumulate, ++seed);    // RLNC-like
      expect_same_as_cpu(600, 100, 70001, even, accumulate, ++seed);  // chunks bounded by lane staging
      expect_same_as_cpu(1, 1, 1, even, accumulate, ++seed);
      expect_same_as_cpu(3, 0, 77, even, accumulate, ++seed);
      expect_same_as_cpu(0, 5, 77, even, accumulate, ++seed);
      expect_same_as_cpu(2, 5, 0, even, accumulate, ++seed);
    }
}

TEST(CudaEngine, PinnedHostBuffersMatchTheCpuEngine) {
  NCAST_REQUIRE_CUDA_DEVICE();
  constexpr std::size_t m = 4, k = 10, len = 3 << 20;
  std::mt19937_64 rng(5);
  PinnedBuffer in(k * len, "test sources"), out(m * len, "test outputs");
  const auto data = random_bytes(k * len, rng);
  std::memcpy(in.get(), data.data(), data.size());
  const auto coefs = random_bytes(m * k, rng);
  std::vector<const std::uint8_t*> ins;
  std::vector<std::uint8_t*> outs, ref_outs;
  std::vector<std::vector<std::uint8_t>> ref(m, std::vector<std::uint8_t>(len));
  for (std::size_t j = 0; j < k; ++j) ins.push_back(in.get() + j * len);
  for (std::size_t i = 0; i < m; ++i) outs.push_back(out.get() + i * len), ref_outs.push_back(ref[i].data());
  std::memset(out.get(), 0xA5, m * len);
  CudaEngine().multiply(coefs.data(), m, k, ins.data(), outs.data(), len, false);
  CpuEngine().multiply(coefs.data(), m, k, ins.data(), ref_outs.data(), len, false);
  for (std::size_t i = 0; i < m; ++i) ASSERT_EQ(0, std::memcmp(outs[i], ref[i].data(), len)) << "output " << i;
}

TEST(CudaEngine, EveryKernelServesTheEngine) {
  NCAST_REQUIRE_CUDA_DEVICE();
  std::mt19937_64 rng(9);
  HostProblem p(6, 20, 5000, false, rng);
  HostProblem want = p;
  for (std::size_t j = 0; j < 20; ++j) want.ins[j] = want.arena.data() + (p.ins[j] - p.arena.data());
  for (std::size_t i = 0; i < 6; ++i) want.outs[i] = want.arena.data() + (p.outs[i] - p.arena.data());
  CpuEngine().multiply(want.coefs.data(), 6, 20, want.ins.data(), want.outs.data(), 5000, false);
  for (Kernel kernel : all_kernels()) {
    SCOPED_TRACE(std::string(to_string(kernel)));
    HostProblem q = p;
    for (std::size_t j = 0; j < 20; ++j) q.ins[j] = q.arena.data() + (p.ins[j] - p.arena.data());
    for (std::size_t i = 0; i < 6; ++i) q.outs[i] = q.arena.data() + (p.outs[i] - p.arena.data());
    CudaEngine engine(0, kernel);
    EXPECT_NE(engine.description().find(to_string(kernel)), std::string::npos);
    engine.multiply(q.coefs.data(), 6, 20, q.ins.data(), q.outs.data(), 5000, false);
    EXPECT_EQ(q.arena, want.arena);
  }
}

TEST(CudaEngine, DeviceResidentProductStaysOnTheDevice) {
  NCAST_REQUIRE_CUDA_DEVICE();
  constexpr std::size_t m = 9, k = 33, len = 4099;
  std::mt19937_64 rng(21);
  const auto coefs = random_bytes(m * k, rng);
  std::vector<std::vector<std::uint8_t>> srcs(k), ref(m), got(m);
  std::vector<const std::uint8_t*> src_ptrs;
  std::vector<std::uint8_t*> ref_ptrs, got_ptrs;
  for (auto& s : srcs) s = random_bytes(len, rng), src_ptrs.push_back(s.data());
  for (std::size_t i = 0; i < m; ++i) {
    ref[i] = poison_bytes(len, rng), got[i] = poison_bytes(len, rng);
    ref_ptrs.push_back(ref[i].data()), got_ptrs.push_back(got[i].data());
  }
  CpuEngine().multiply(coefs.data(), m, k, src_ptrs.data(), ref_ptrs.data(), len, false);

  CudaEngine engine;
  DeviceMatrix dc(m, k), ds(k, len), dd(m, len);
  const std::uint8_t* coef_rows[m];
  for (std::size_t i = 0; i < m; ++i) coef_rows[i] = coefs.data() + i * k;
  dc.upload(coef_rows);
  ds.upload(src_ptrs.data());
  engine.multiply_device(dc.cref(), ds.cref(), dd.ref(), false, nullptr);
  dd.download(got_ptrs.data());
  check(cudaDeviceSynchronize(), "finishing the test");
  EXPECT_EQ(got, ref);
}

TEST(CudaEngine, ErrorsAreExceptionsThatSayWhat) {
  NCAST_REQUIRE_CUDA_DEVICE();
  CudaEngine engine;
  DeviceMatrix a(2, 64), b(3, 64);
  EXPECT_THROW(engine.multiply_device(a.cref(), a.cref(), b.ref(), false, nullptr), std::invalid_argument);
  EXPECT_THROW(CudaEngine(1 << 20), CudaError);
}

// Provokes a failing cudaMalloc on purpose, so tools/device-check.sh leaves it out of the memcheck run
// (which reports every failing API call).
TEST(CudaEngine, OutOfMemoryIsAClearErrorAndNotSticky) {
  NCAST_REQUIRE_CUDA_DEVICE();
  CudaEngine engine;
  try {
    DeviceBuffer huge(std::size_t{1} << 50, "a test allocation");  // 1 PiB
    FAIL() << "a 1 PiB allocation succeeded";
  } catch (const CudaError& e) {
    EXPECT_EQ(e.code(), cudaErrorMemoryAllocation);
    EXPECT_NE(std::string(e.what()).find("out of GPU memory: a test allocation needs"), std::string::npos) << e.what();
  }
  // Out of memory is not sticky: the engine still works.
  std::uint8_t src[8] = {1, 2, 3, 4, 5, 6, 7, 8}, dst[8];
  std::memset(dst, 0xEE, sizeof dst);
  const std::uint8_t* ins[] = {src};
  std::uint8_t* outs[] = {dst};
  const std::uint8_t two = 2;
  engine.multiply(&two, 1, 1, ins, outs, 8, false);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(dst[i], 2 * src[i]);  // no reduction below 0x80
}

TEST(EngineFactory, CudaWithoutADeviceSaysWhy) {
  std::string why;
  if (!usable_devices(&why).empty()) GTEST_SKIP() << "a device is present; this case is for machines without one";
  try {
    make_engine(Backend::cuda);
    FAIL() << "make_engine(cuda) succeeded without a device";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("backend cuda: no usable CUDA device"), std::string::npos) << e.what();
  }
  EXPECT_EQ(make_engine(Backend::automatic)->backend(), Backend::cpu);
}

TEST(EngineFactory, AutoAndCudaPickTheDevice) {
  NCAST_REQUIRE_CUDA_DEVICE();
  EXPECT_EQ(make_engine(Backend::cuda)->backend(), Backend::cuda);
  EXPECT_EQ(make_engine(Backend::automatic)->backend(), Backend::cuda);
  EXPECT_EQ(make_engine(Backend::cpu)->backend(), Backend::cpu);
}

}  // namespace
}  // namespace ncast::gpu
