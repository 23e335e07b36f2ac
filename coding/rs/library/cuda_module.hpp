#pragma once
// The contract between libncast_rs.so and its CUDA module, libncast_rs_cuda.so in ncast/ beside it.
// The library loads the module (dlopen) the first time a codec asks for backend auto or cuda, so that
// the library itself links no CUDA library and loads on machines that have none. Both come from one
// build; the entry's name carries the version of this struct and changes with it.
#include <cstddef>

#include "coding/engine.hpp"

namespace ncast::rs_library {

struct CudaModuleEngine {
  Engine* engine = nullptr;                        // owned by the caller from then on; null when none could be had
  void* (*allocate)(std::size_t bytes) = nullptr;  // page-locked host memory, for Backend::cuda buffers
  void (*release)(void* p) = nullptr;
  char why[256] = {};  // why there is no engine
};

inline constexpr const char* kCudaModuleFile = "ncast/libncast_rs_cuda.so";
inline constexpr const char* kCudaModuleEntry = "ncast_rs_cuda_module_open_v1";
using CudaModuleOpen = void (*)(CudaModuleEngine* out) noexcept;

}  // namespace ncast::rs_library
