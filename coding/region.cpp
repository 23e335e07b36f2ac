#include "coding/region.hpp"

#include <stdexcept>
#include <string>

#include "coding/region_levels.hpp"

namespace ncast::gf {

const RegionKernels& kernels_for(Level level) {
  if (!cpu_supports(level))
    throw std::runtime_error("GF(2^8) kernels: this CPU cannot run level " + std::string(to_string(level)));
  switch (level) {
    case Level::scalar: return detail::kScalarKernels;
    case Level::avx2: return detail::kAvx2Kernels;
    case Level::avx2_gfni: return detail::kAvx2GfniKernels;
    case Level::avx512_gfni: return detail::kAvx512GfniKernels;
  }
  throw std::logic_error("GF(2^8) kernels: unknown level");
}

const RegionKernels& kernels() {
  static const RegionKernels& active = kernels_for(active_level());
  return active;
}

}  // namespace ncast::gf
