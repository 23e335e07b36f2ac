#pragma once
// Seeded RLNC coefficient vectors drawn on the device with cuRAND's Philox4x32-10, bit for bit the
// vectors the CPU draws (coding/rlnc/coefficients.hpp; docs/coefficients.md is normative), so the
// GPU encoder needs no coefficient traffic from the host.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "gpu/device_matrix.hpp"

namespace ncast::gpu {

struct CoefficientRequest {
  std::uint64_t seed;       // rlnc::coefficient_seed(server, stream)
  std::uint32_t segment;    // the generation
  std::uint32_t index;      // the coded-symbol index
  std::uint32_t n;          // coefficients to draw, 1..256
  std::uint32_t threshold;  // density: 1..65535 sparse, 65536 dense
  std::uint32_t unit;       // non-zero: the unit vector e_index instead (a systematic symbol)
};

// Row r of out gets the n coefficients of requests[r] (a device array of count requests); bytes of a
// row past its n are left alone, and so is the row of a request whose n is not in 1..max_n. Throws
// std::invalid_argument when out has too few rows or columns for max_n or max_n is not in 1..256.
void draw_coefficients(const CoefficientRequest* requests, std::size_t count, std::size_t max_n, DeviceMatrixRef out,
                       cudaStream_t stream);

}  // namespace ncast::gpu
