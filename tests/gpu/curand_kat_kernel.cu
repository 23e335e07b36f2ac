// cuRAND itself, for the known-answer test: what curand() returns after curand_init(seed,
// subsequence, offset) on a curandStatePhilox4_32_10_t, straight from curand_kernel.h.
#include "tests/gpu/curand_kat_kernel.hpp"

#include <curand_kernel.h>

#include "gpu/cuda_check.hpp"
#include "gpu/device_memory.hpp"

namespace ncast::gpu::testing {
namespace {

__global__ void curand_values(std::uint64_t seed, std::uint64_t subsequence, std::uint64_t offset, std::size_t count,
                              std::uint32_t* out) {
  curandStatePhilox4_32_10_t state;
  curand_init(seed, subsequence, offset, &state);
  for (std::size_t i = 0; i < count; ++i) out[i] = curand(&state);
}

}  // namespace

std::vector<std::uint32_t> curand_philox_values(std::uint64_t seed, std::uint64_t subsequence, std::uint64_t offset,
                                                std::size_t count) {
  DeviceBuffer out(count * sizeof(std::uint32_t), "curand test values");
  curand_values<<<1, 1>>>(seed, subsequence, offset, count, reinterpret_cast<std::uint32_t*>(out.get()));
  check_launch("curand_values");
  std::vector<std::uint32_t> values(count);
  check(cudaMemcpy(values.data(), out.get(), count * sizeof(std::uint32_t), cudaMemcpyDeviceToHost),
        "reading curand values");
  return values;
}

}  // namespace ncast::gpu::testing
