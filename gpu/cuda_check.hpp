#pragma once
// CUDA runtime failures as exceptions that say what was being done, so no caller has to decode an
// error number and no error is dropped on the floor.
#include <cuda_runtime.h>

#include <cstddef>
#include <stdexcept>
#include <string>

namespace ncast::gpu {

class CudaError : public std::runtime_error {
 public:
  CudaError(cudaError_t code, const std::string& message) : std::runtime_error(message), code_(code) {}
  cudaError_t code() const { return code_; }

 private:
  cudaError_t code_;
};

// Throws CudaError "CUDA error while <what>: <description> (<name>)" unless err is cudaSuccess.
void check(cudaError_t err, const char* what);
// After a kernel launch: reports a bad launch configuration at once (asynchronous faults surface at
// the next synchronising call, which check() also reports).
void check_launch(const char* kernel);
// cudaMalloc that reports an out-of-memory failure with the size asked for and what is free.
void* device_alloc(std::size_t bytes, const char* what);
// cudaMallocHost (page-locked host memory), same reporting.
void* pinned_alloc(std::size_t bytes, const char* what);

}  // namespace ncast::gpu
