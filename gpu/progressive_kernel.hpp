#pragma once
// The coefficient side of one round of the progressive decoder (progressive_decoder.hpp), as the host
// code hands it to the device: one job per generation that has arrivals in the round.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace ncast::gpu::detail {

// The generation's `count` arrivals of the round are rows of three matrices with the same pitch
// (vector_pitch): their raw coefficient vectors (coefs), the same times the generation's state
// (reduced = coefs · state: each raw vector's components along the rows held before the round), and
// new_rows, which receives each arrival's reduced row (zero for a non-innovative one). state (n × n)
// is the held rows in reduced row echelon form, row c the one with pivot c (zero when c is no pivot).
// Outputs per arrival j: transforms row j (n + count bytes), the combination of the held payload
// slots (first n) and the round's raw payloads (next count) that is its reduced payload; flags[j]
// = 1 when it was innovative. mixes (n × count): the combination of the reduced new rows to add to
// each slot (the held rows' components along the new pivots, 1 where a new row takes an empty slot).
struct EliminateJob {
  const std::uint8_t* coefs;
  const std::uint8_t* reduced;
  std::uint8_t* new_rows;
  std::size_t vector_pitch;
  const std::uint8_t* state;
  std::size_t state_pitch;
  std::uint8_t* transforms;
  std::size_t transform_pitch;
  std::uint8_t* mixes;
  std::size_t mix_pitch;
  std::uint8_t* flags;
  std::uint32_t n, count;
};

inline constexpr std::uint32_t kMaxRound = 64;  // arrivals of one generation per round

// One block per job (a device array of `jobs` jobs); max_n and max_count bound every job's n and count.
void launch_eliminate(const EliminateJob* jobs, std::size_t count, std::uint32_t max_n, std::uint32_t max_count,
                      cudaStream_t stream);

}  // namespace ncast::gpu::detail
