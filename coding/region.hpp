#pragma once
// Region kernels: GF(2^8) arithmetic over byte buffers, the inner loops of every codec in ncast.
// Buffers may have any length and alignment; sources and destinations must not overlap unless
// the same pointer is passed (mul and mul_add allow dst == src).
#include <cstddef>
#include <cstdint>

#include "coding/simd_level.hpp"

namespace ncast::gf {

struct RegionKernels {
  Level level;
  // dst = c · src
  void (*mul)(std::uint8_t* dst, const std::uint8_t* src, std::uint8_t c, std::size_t len);
  // dst ^= c · src
  void (*mul_add)(std::uint8_t* dst, const std::uint8_t* src, std::uint8_t c, std::size_t len);
  // dst = Σ_j coefs[j] · srcs[j], j < k
  void (*dot)(std::uint8_t* dst, const std::uint8_t* const* srcs, const std::uint8_t* coefs, std::size_t k,
              std::size_t len);
  // dsts[i] = Σ_j coefs[i·k + j] · srcs[j] for i < m (or ^= when accumulate), in one cache-blocked
  // pass over the sources however large k × m is.
  void (*dot_multi)(std::uint8_t* const* dsts, std::size_t m, const std::uint8_t* const* srcs, std::size_t k,
                    const std::uint8_t* coefs, std::size_t len, bool accumulate);
};

// The kernels of the active level (see active_level()).
const RegionKernels& kernels();
// The kernels of one level; throws std::runtime_error when this CPU cannot run it.
const RegionKernels& kernels_for(Level level);

}  // namespace ncast::gf
