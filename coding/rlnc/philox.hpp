#pragma once
// Philox4x32-10 (Salmon, Moraes, Dror, Shaw: "Parallel random numbers: as easy as 1, 2, 3", SC 2011;
// the Random123 library), and the stream of 32-bit values that cuRAND's device API draws from it.
// CurandPhilox reproduces, on the CPU, what curand() returns on a curandStatePhilox4_32_10_t after
// curand_init(seed, subsequence, offset, &state): the CUDA backend draws the same coefficients.
#include <array>
#include <cstddef>
#include <cstdint>

namespace ncast::rlnc {

using PhiloxCounter = std::array<std::uint32_t, 4>;  // x, y, z, w
using PhiloxKey = std::array<std::uint32_t, 2>;      // x, y

// Ten rounds, bumping the key between rounds, as curand_Philox4x32_10 and Random123's philox4x32.
PhiloxCounter philox4x32_10(PhiloxCounter counter, PhiloxKey key);

// count consecutive blocks: block i at counter (counter.x + i, y, z, w), its words to out[4i .. 4i+3].
// counter.x + count must not pass 2^32 (nothing carries into y). Sixteen blocks at a time with AVX-512
// when the active SIMD level (coding/simd_level.hpp) has it.
void philox4x32_10_blocks(PhiloxCounter counter, PhiloxKey key, std::size_t count, std::uint32_t* out);

// The state and stepping of curandStatePhilox4_32_10_t (curand_kernel.h): a 128-bit counter whose
// high 64 bits (z, w) are the subsequence and low 64 bits (x, y) the block within it; each block
// gives four values, x first.
class CurandPhilox {
 public:
  // curand_init(seed, subsequence, offset): key = seed (x low, y high), counter z:w = subsequence,
  // then offset values skipped.
  CurandPhilox(std::uint64_t seed, std::uint64_t subsequence, std::uint64_t offset);

  // curand(): the next value.
  std::uint32_t operator()();
  // skipahead(n) and skipahead_sequence(n).
  void skipahead(std::uint64_t n);
  void skipahead_sequence(std::uint64_t n);

 private:
  void add_to_low(std::uint64_t n);  // Philox_State_Incr(state, n)
  void increment();                  // Philox_State_Incr(state)

  PhiloxCounter ctr_{};
  PhiloxCounter output_{};
  PhiloxKey key_{};
  unsigned state_ = 0;  // which word of output_ comes next
};

}  // namespace ncast::rlnc
