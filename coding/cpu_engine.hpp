#pragma once
#include "coding/engine.hpp"
#include "coding/region.hpp"

namespace ncast {

// Runs on the region kernels of one SIMD level (the active one unless told otherwise).
class CpuEngine final : public Engine {
 public:
  CpuEngine();
  explicit CpuEngine(gf::Level level);

  Backend backend() const override { return Backend::cpu; }
  std::string description() const override;
  void multiply(const std::uint8_t* coefs, std::size_t m, std::size_t k, const std::uint8_t* const* ins,
                std::uint8_t* const* outs, std::size_t len, bool accumulate) override;

 private:
  const gf::RegionKernels* kernels_;
};

}  // namespace ncast
