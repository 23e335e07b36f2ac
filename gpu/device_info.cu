#include "gpu/device_info.hpp"

#include <cuda_runtime.h>

#include <cstdio>

namespace ncast::gpu {

std::vector<DeviceInfo> usable_devices(std::string* why) {
  int count = 0;
  if (cudaError_t err = cudaGetDeviceCount(&count); err != cudaSuccess) {
    if (why) *why = cudaGetErrorString(err);
    cudaGetLastError();  // clear the sticky error so later calls start clean
    return {};
  }
  std::vector<DeviceInfo> out;
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) continue;
    out.push_back({i, prop.name, prop.major, prop.minor, prop.multiProcessorCount, prop.totalGlobalMem});
  }
  if (out.empty() && why) *why = "no CUDA device found";
  return out;
}

std::string describe(const DeviceInfo& d) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s (sm_%d%d, %d SMs, %.1f GiB)", d.name.c_str(), d.major, d.minor, d.multiprocessors,
                static_cast<double>(d.memory_bytes) / (1 << 30));
  return buf;
}

}  // namespace ncast::gpu
