// The engine factory of builds with the CUDA backend compiled in.
#include <iostream>
#include <stdexcept>

#include "coding/cpu_engine.hpp"
#include "gpu/device_info.hpp"

namespace ncast {

std::unique_ptr<Engine> make_engine(Backend backend) {
  if (backend == Backend::cpu) return std::make_unique<CpuEngine>();
  std::string why;
  const auto devices = gpu::usable_devices(&why);
  if (backend == Backend::cuda)
    throw std::runtime_error(devices.empty() ? "backend cuda: " + why
                                             : "backend cuda: the CUDA engine is not part of this build yet");
  return std::make_unique<CpuEngine>();
}

}  // namespace ncast
