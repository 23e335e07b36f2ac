#pragma once
// The per-level kernel tables, each defined in a translation unit compiled for its instruction set.
#include "coding/region.hpp"

namespace ncast::gf::detail {

extern const RegionKernels kScalarKernels;
extern const RegionKernels kAvx2Kernels;
extern const RegionKernels kAvx2GfniKernels;
extern const RegionKernels kAvx512GfniKernels;

}  // namespace ncast::gf::detail
