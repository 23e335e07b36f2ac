#include "gpu/cuda_check.hpp"

#include <cstdio>

namespace ncast::gpu {
namespace {

std::string mib(std::size_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return buf;
}

}  // namespace

void check(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return;
  std::string message =
      std::string("CUDA error while ") + what + ": " + cudaGetErrorString(err) + " (" + cudaGetErrorName(err) + ")";
  // A fault inside a kernel leaves the context unusable: say so, since every later call fails too.
  if (err == cudaErrorIllegalAddress || err == cudaErrorLaunchFailure || err == cudaErrorHardwareStackError ||
      err == cudaErrorIllegalInstruction || err == cudaErrorMisalignedAddress)
    message += "; the CUDA context of this process is no longer usable";
  throw CudaError(err, message);
}

void check_launch(const char* kernel) {
  const std::string what = std::string("launching kernel ") + kernel;
  check(cudaGetLastError(), what.c_str());
}

void* device_alloc(std::size_t bytes, const char* what) {
  void* p = nullptr;
  const cudaError_t err = cudaMalloc(&p, bytes);
  if (err == cudaErrorMemoryAllocation) {
    cudaGetLastError();  // out of memory is not sticky: clear it so the caller may go on
    std::size_t free_bytes = 0, total = 0;
    cudaMemGetInfo(&free_bytes, &total);
    int device = -1;
    cudaGetDevice(&device);
    throw CudaError(err, std::string("out of GPU memory: ") + what + " needs " + mib(bytes) + ", device " +
                             std::to_string(device) + " has " + mib(free_bytes) + " free of " + mib(total));
  }
  check(err, what);
  return p;
}

void* pinned_alloc(std::size_t bytes, const char* what) {
  void* p = nullptr;
  const cudaError_t err = cudaMallocHost(&p, bytes);
  if (err == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    throw CudaError(err, std::string("out of page-locked host memory: ") + what + " needs " + mib(bytes));
  }
  check(err, what);
  return p;
}

}  // namespace ncast::gpu
