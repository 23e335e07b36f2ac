// The engine factory of builds without the CUDA backend.
#include <stdexcept>

#include "coding/cpu_engine.hpp"

namespace ncast {

std::unique_ptr<Engine> make_engine(Backend backend) {
  if (backend == Backend::cuda)
    throw std::runtime_error("backend cuda: this build of ncast has no CUDA backend (use --backend cpu or auto)");
  return std::make_unique<CpuEngine>();
}

}  // namespace ncast
