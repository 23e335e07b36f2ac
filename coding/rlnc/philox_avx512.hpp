#pragma once
// Sixteen Philox4x32-10 blocks per step with AVX-512 (philox_avx512.cpp is built for it; call only
// when the CPU has AVX-512F).
#include <cstddef>
#include <cstdint>

#include "coding/rlnc/philox.hpp"

namespace ncast::rlnc::detail {

void philox4x32_10_blocks_avx512(PhiloxCounter counter, PhiloxKey key, std::size_t count, std::uint32_t* out);

}  // namespace ncast::rlnc::detail
