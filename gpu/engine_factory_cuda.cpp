// The engine factory of builds with the CUDA backend compiled in: cuda gives the CUDA engine or an
// error saying why it cannot; auto gives it when a device is usable (and says which on stderr),
// else the CPU engine. Handing out a CUDA engine also makes host buffers for Backend::cuda
// page-locked, so that the engine's copies are asynchronous and run at full PCIe speed.
#include <iostream>
#include <mutex>
#include <stdexcept>

#include "coding/cpu_engine.hpp"
#include "coding/host_memory.hpp"
#include "gpu/cuda_engine.hpp"
#include "gpu/device_info.hpp"
#include "gpu/pinned_host.hpp"

namespace ncast {
namespace {

std::unique_ptr<Engine> cuda_engine(int device) {
  auto engine = std::make_unique<gpu::CudaEngine>(device);
  set_host_allocator(Backend::cuda, gpu::pinned_host_allocator());
  return engine;
}

}  // namespace

std::unique_ptr<Engine> make_engine(Backend backend) {
  if (backend == Backend::cpu) return std::make_unique<CpuEngine>();
  std::string why;
  const auto devices = gpu::usable_devices(&why);
  if (backend == Backend::cuda) {
    if (devices.empty()) throw std::runtime_error("backend cuda: no usable CUDA device: " + why);
    try {
      return cuda_engine(devices.front().index);
    } catch (const std::exception& e) {
      throw std::runtime_error(std::string("backend cuda: ") + e.what());
    }
  }
  if (!devices.empty()) {
    try {
      auto engine = cuda_engine(devices.front().index);
      static std::once_flag logged;  // one line per process, however many engines it makes
      std::call_once(logged, [&] {
        std::cerr << "ncast: backend auto: CUDA device " << devices.front().index << ": "
                  << gpu::describe(devices.front()) << "\n";
      });
      return engine;
    } catch (const std::exception& e) {
      std::cerr << "ncast: backend auto: CUDA device unusable (" << e.what() << "); using the CPU\n";
    }
  }
  return std::make_unique<CpuEngine>();
}

}  // namespace ncast
