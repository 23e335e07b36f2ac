#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ncast::gpu::testing {

// count values of cuRAND's Philox4x32-10 device generator after curand_init(seed, subsequence, offset).
std::vector<std::uint32_t> curand_philox_values(std::uint64_t seed, std::uint64_t subsequence, std::uint64_t offset,
                                                std::size_t count);

}  // namespace ncast::gpu::testing
