#pragma once
// The CUDA backend of the Engine: the same GF(2^8) matrix product as the CPU engine, on one device.
// multiply() takes host buffers and pipelines them through the device in column chunks over several
// streams (copy in, compute, copy out overlap; page-locked host buffers make the copies asynchronous
// and full speed). multiply_device() works on device-resident matrices and leaves them there.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "coding/engine.hpp"
#include "gpu/device_info.hpp"
#include "gpu/device_matrix.hpp"
#include "gpu/device_memory.hpp"
#include "gpu/gf_kernel.hpp"

namespace ncast::gpu {

class CudaEngine final : public Engine {
 public:
  // Opens `device` (an index of usable_devices()) and checks that this build's kernels run on it;
  // throws CudaError with the reason otherwise.
  explicit CudaEngine(int device = 0, Kernel kernel = Kernel::automatic);
  ~CudaEngine() override;

  Backend backend() const override { return Backend::cuda; }
  // "cuda NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 79.1 GiB) auto"
  std::string description() const override;
  int device() const { return info_.index; }
  Kernel kernel() const { return kernel_; }

  // Host buffers. Thread-safe (calls are serialised); returns when the outputs are written.
  void multiply(const std::uint8_t* coefs, std::size_t m, std::size_t k, const std::uint8_t* const* ins,
                std::uint8_t* const* outs, std::size_t len, bool accumulate) override;

  // Device-resident D = C·S (or ^=) on this engine's device, enqueued on stream; see gf_kernel.hpp
  // for the layouts. The caller synchronises the stream.
  void multiply_device(ConstDeviceMatrixRef coefs, ConstDeviceMatrixRef src, DeviceMatrixRef dst, bool accumulate,
                       cudaStream_t stream) const;

 private:
  struct Lane;  // one stream with its device staging
  std::size_t chunk_columns(std::size_t m, std::size_t k, std::size_t len) const;

  DeviceInfo info_;
  Kernel kernel_;
  std::mutex mutex_;
  DeviceBuffer coefs_;
  std::vector<std::unique_ptr<Lane>> lanes_;
};

}  // namespace ncast::gpu
