#include "coding/cpu_engine.hpp"

#include <string>

namespace ncast {

CpuEngine::CpuEngine() : kernels_(&gf::kernels()) {}
CpuEngine::CpuEngine(gf::Level level) : kernels_(&gf::kernels_for(level)) {}

std::string CpuEngine::description() const { return "cpu " + std::string(gf::to_string(kernels_->level)); }

void CpuEngine::multiply(const std::uint8_t* coefs, std::size_t m, std::size_t k, const std::uint8_t* const* ins,
                         std::uint8_t* const* outs, std::size_t len, bool accumulate) {
  kernels_->dot_multi(outs, m, ins, k, coefs, len, accumulate);
}

}  // namespace ncast
