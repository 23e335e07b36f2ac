#include "gpu/pinned_host.hpp"

#include <cuda_runtime.h>

namespace ncast::gpu {
namespace {

void* pinned_allocate(std::size_t bytes) {
  void* p = nullptr;
  if (cudaMallocHost(&p, bytes) != cudaSuccess) {
    cudaGetLastError();  // a failed allocation is not sticky; leave no error behind
    return nullptr;
  }
  return p;
}

void pinned_release(void* p) { cudaFreeHost(p); }

}  // namespace

HostAllocator pinned_host_allocator() { return {pinned_allocate, pinned_release, "pinned"}; }

}  // namespace ncast::gpu
