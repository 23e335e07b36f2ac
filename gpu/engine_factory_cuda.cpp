// The engine factory of builds with the CUDA backend compiled in: cuda gives the CUDA engine or an
// error saying why it cannot; auto gives it when a device is usable (and says which on stderr),
// else the CPU engine.
#include <iostream>
#include <stdexcept>

#include "coding/cpu_engine.hpp"
#include "gpu/cuda_engine.hpp"
#include "gpu/device_info.hpp"

namespace ncast {

std::unique_ptr<Engine> make_engine(Backend backend) {
  if (backend == Backend::cpu) return std::make_unique<CpuEngine>();
  std::string why;
  const auto devices = gpu::usable_devices(&why);
  if (backend == Backend::cuda) {
    if (devices.empty()) throw std::runtime_error("backend cuda: no usable CUDA device: " + why);
    try {
      return std::make_unique<gpu::CudaEngine>(devices.front().index);
    } catch (const std::exception& e) {
      throw std::runtime_error(std::string("backend cuda: ") + e.what());
    }
  }
  if (!devices.empty()) {
    try {
      auto engine = std::make_unique<gpu::CudaEngine>(devices.front().index);
      std::cerr << "ncast: backend auto: CUDA device " << devices.front().index << ": " << gpu::describe(devices.front())
                << "\n";
      return engine;
    } catch (const std::exception& e) {
      std::cerr << "ncast: backend auto: CUDA device unusable (" << e.what() << "); using the CPU\n";
    }
  }
  return std::make_unique<CpuEngine>();
}

}  // namespace ncast
