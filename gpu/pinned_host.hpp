#pragma once
// Page-locked host memory as a HostAllocator: what buffers for Backend::cuda come from once a CUDA
// engine is handed out, so that its copies are asynchronous and run at full PCIe speed.
#include "coding/host_memory.hpp"

namespace ncast::gpu {

HostAllocator pinned_host_allocator();

}  // namespace ncast::gpu
