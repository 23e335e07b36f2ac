#pragma once
// The CUDA devices this process can use, as the backend choice and the logs describe them.
#include <cstddef>
#include <string>
#include <vector>

namespace ncast::gpu {

struct DeviceInfo {
  int index = 0;
  std::string name;
  int major = 0, minor = 0;  // compute capability
  int multiprocessors = 0;
  std::size_t memory_bytes = 0;
};

// Every usable device; empty when there is no driver, no device, or the runtime refuses (the
// reason is then in *why when given).
std::vector<DeviceInfo> usable_devices(std::string* why = nullptr);

// "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 79.1 GiB)".
std::string describe(const DeviceInfo& device);

}  // namespace ncast::gpu
