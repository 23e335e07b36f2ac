#pragma once
// Checks that any GPU product kernel must pass, for the engine's kernels (gf_kernel_test.cpp) and for
// the bench's seed-style baselines (tests/tools/bench): against the CPU engine on random data with
// the outputs and the bytes around them poisoned, every one of the 65536 products against a
// table-free reference, and no sources.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "coding/cpu_engine.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/device_memory.hpp"
#include "gpu/gf_kernel.hpp"
#include "tests/coding/gf_reference.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace ncast::gpu::testing {

// One way to enqueue D = C·S (D ^= C·S when accumulate) on the legacy stream.
struct NamedMultiply {
  std::string name;
  std::function<void(const Product& product, bool accumulate)> run;
};

// m = 1, 5, 37 outputs of len bytes from n sources, each plain and accumulating; the coefficients
// at an odd pitch (they have no layout rule).
inline void expect_cpu_agreement(const std::vector<NamedMultiply>& kernels, std::size_t n, std::size_t len) {
  std::mt19937_64 rng(n * 1000003 + len);
  CpuEngine cpu;
  for (std::size_t m : {std::size_t{1}, std::size_t{5}, std::size_t{37}}) {
    std::vector<std::uint8_t> coefs(m * n);
    for (auto& c : coefs) c = random_coef(rng);
    std::vector<std::vector<std::uint8_t>> srcs(n), start(m), expect(m), expect_acc(m);
    for (auto& s : srcs) s = random_bytes(len, rng);
    for (std::size_t i = 0; i < m; ++i) start[i] = random_bytes(len, rng);
    std::vector<const std::uint8_t*> src_ptrs;
    for (const auto& s : srcs) src_ptrs.push_back(s.data());
    std::vector<std::uint8_t*> out_ptrs, acc_ptrs;
    for (std::size_t i = 0; i < m; ++i) {
      expect[i] = poison_bytes(len, rng);
      expect_acc[i] = start[i];
      out_ptrs.push_back(expect[i].data());
      acc_ptrs.push_back(expect_acc[i].data());
    }
    cpu.multiply(coefs.data(), m, n, src_ptrs.data(), out_ptrs.data(), len, false);
    cpu.multiply(coefs.data(), m, n, src_ptrs.data(), acc_ptrs.data(), len, true);

    const std::size_t coef_pitch = n + 3;
    std::vector<std::uint8_t> coef_rows = poison_bytes(m * coef_pitch, rng);
    for (std::size_t i = 0; i < m; ++i)
      std::copy(coefs.begin() + static_cast<long>(i * n), coefs.begin() + static_cast<long>((i + 1) * n),
                coef_rows.begin() + static_cast<long>(i * coef_pitch));
    DeviceBuffer coef_buf(coef_rows.size(), "test coefficients");
    to_device(coef_buf.get(), coef_rows);
    PoisonedMatrix src(n, len, rng);
    src.set_rows(srcs);

    for (const NamedMultiply& k : kernels) {
      SCOPED_TRACE(k.name + ", m=" + std::to_string(m));
      const ConstDeviceMatrixRef c{coef_buf.get(), m, n, coef_pitch};
      for (bool accumulate : {false, true}) {
        PoisonedMatrix dst(m, len, rng);
        if (accumulate) dst.set_rows(start);
        k.run({c, src.ref(), dst.ref()}, accumulate);
        check(cudaDeviceSynchronize(), "running the kernel");
        const auto all = from_device(dst.buffer.get(), dst.buffer.size());
        const auto& want = accumulate ? expect_acc : expect;
        for (std::size_t i = 0; i < m; ++i)
          ASSERT_EQ(dst.row(all, i), want[i]) << "output row " << i << (accumulate ? " (accumulate)" : "");
        ASSERT_TRUE(dst.outside_untouched(all)) << "a byte outside the outputs changed";
        ASSERT_EQ(from_device(src.buffer.get(), src.buffer.size()), src.initial) << "the sources changed";
      }
    }
  }
}

// Output row c is coefficient c times the source row x = 0..255 (then 0, 1, 2 again, a tail that is
// not a whole word): all 65536 products.
inline void expect_every_product(const std::vector<NamedMultiply>& kernels) {
  constexpr std::size_t kLen = 259;
  std::mt19937_64 rng(11);
  std::vector<std::uint8_t> coefs(256);
  for (unsigned c = 0; c < 256; ++c) coefs[c] = static_cast<std::uint8_t>(c);
  std::vector<std::uint8_t> row(kLen);
  for (std::size_t x = 0; x < kLen; ++x) row[x] = static_cast<std::uint8_t>(x);
  DeviceBuffer coef_buf(256, "test coefficients");
  to_device(coef_buf.get(), coefs);
  PoisonedMatrix src(1, kLen, rng);
  src.set_rows({row});
  for (const NamedMultiply& k : kernels) {
    SCOPED_TRACE(k.name);
    PoisonedMatrix dst(256, kLen, rng);
    k.run({{coef_buf.get(), 256, 1, 1}, src.ref(), dst.ref()}, false);
    check(cudaDeviceSynchronize(), "running the kernel");
    const auto all = from_device(dst.buffer.get(), dst.buffer.size());
    for (unsigned c = 0; c < 256; ++c) {
      const auto got = dst.row(all, c);
      for (std::size_t x = 0; x < kLen; ++x)
        ASSERT_EQ(got[x], ncast::testing::slow_mul(static_cast<std::uint8_t>(c), row[x])) << "c=" << c << " x=" << x;
    }
  }
}

inline void expect_zero_outputs_without_sources(const std::vector<NamedMultiply>& kernels) {
  std::mt19937_64 rng(12);
  for (const NamedMultiply& k : kernels) {
    SCOPED_TRACE(k.name);
    PoisonedMatrix src(0, 100, rng), dst(3, 100, rng);
    k.run({{nullptr, 3, 0, 0}, src.ref(), dst.ref()}, false);
    check(cudaDeviceSynchronize(), "running the kernel");
    const auto all = from_device(dst.buffer.get(), dst.buffer.size());
    for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(dst.row(all, i), std::vector<std::uint8_t>(100, 0));
  }
}

}  // namespace ncast::gpu::testing
