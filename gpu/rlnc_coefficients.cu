// One thread per vector: curand_init + curand() on a curandStatePhilox4_32_10_t, then the dense or
// sparse rule of docs/coefficients.md §2, exactly as coding/rlnc/coefficients.cpp applies it.
#include "gpu/rlnc_coefficients.hpp"

#include <curand_kernel.h>

#include <stdexcept>
#include <string>

#include "gpu/cuda_check.hpp"

namespace ncast::gpu {
namespace {

constexpr unsigned kThreads = 128;

__device__ inline std::uint8_t nonzero_value(std::uint32_t word) {
  return static_cast<std::uint8_t>(1 + (((word >> 16) * 255u) >> 16));
}

__global__ void __launch_bounds__(kThreads) draw_kernel(const CoefficientRequest* requests, std::size_t count,
                                                        std::uint32_t max_n, std::uint8_t* out, std::size_t pitch) {
  const std::size_t r = std::size_t{blockIdx.x} * kThreads + threadIdx.x;
  if (r >= count) return;
  const CoefficientRequest q = requests[r];
  if (q.n == 0 || q.n > max_n) return;  // outside the contract: touch nothing
  std::uint8_t* row = out + r * pitch;
  if (q.unit) {
    for (std::uint32_t j = 0; j < q.n; ++j) row[j] = j == q.index ? 1 : 0;
    return;
  }
  const std::uint64_t subsequence = (std::uint64_t{q.segment} << 32) | q.index;
  curandStatePhilox4_32_10_t state;
  curand_init(q.seed, subsequence, 0, &state);
  bool any = false;
  if (q.threshold >= 65536) {
    for (std::uint32_t j = 0; j < q.n; j += 4) {
      const std::uint32_t w = curand(&state);
      for (std::uint32_t b = 0; b < 4 && j + b < q.n; ++b) {
        row[j + b] = static_cast<std::uint8_t>(w >> (8 * b));
        any |= row[j + b] != 0;
      }
    }
    if (!any) row[0] = 1;
    return;
  }
  for (std::uint32_t j = 0; j < q.n; ++j) {
    const std::uint32_t w = curand(&state);
    const bool present = (w & 0xFFFFu) < q.threshold;
    row[j] = present ? nonzero_value(w) : 0;
    any |= present;
  }
  if (any) return;
  // None present: value n picks the position, which takes the value its own word (value p) gives.
  const std::uint32_t p = static_cast<std::uint32_t>((std::uint64_t{curand(&state) & 0xFFFFu} * q.n) >> 16);
  curandStatePhilox4_32_10_t at_p;
  curand_init(q.seed, subsequence, p, &at_p);
  row[p] = nonzero_value(curand(&at_p));
}

}  // namespace

void draw_coefficients(const CoefficientRequest* requests, std::size_t count, std::size_t max_n, DeviceMatrixRef out,
                       cudaStream_t stream) {
  if (count == 0) return;
  if (max_n < 1 || max_n > 256)
    throw std::invalid_argument("draw_coefficients: n must be in 1..256, not " + std::to_string(max_n));
  if (out.rows < count || out.cols < max_n || out.pitch < out.cols || out.data == nullptr || requests == nullptr)
    throw std::invalid_argument("draw_coefficients: the output matrix (" + std::to_string(out.rows) + "x" +
                                std::to_string(out.cols) + ") cannot hold " + std::to_string(count) +
                                " vectors of up to " + std::to_string(max_n) + " coefficients");
  const auto blocks = static_cast<unsigned>((count + kThreads - 1) / kThreads);
  draw_kernel<<<blocks, kThreads, 0, stream>>>(requests, count, static_cast<std::uint32_t>(max_n), out.data, out.pitch);
  check_launch("draw_coefficients");
}

}  // namespace ncast::gpu
