#include "gpu/cuda_engine.hpp"

#include <algorithm>
#include <stdexcept>

#include "gpu/cuda_check.hpp"

namespace ncast::gpu {
namespace {

constexpr std::size_t kLanes = 4;                          // streams the host path spreads chunks over
constexpr std::size_t kLaneBytes = std::size_t{32} << 20;  // device staging per stream (inputs + outputs)
constexpr std::size_t kColumnAlign = 128;

DeviceInfo open_device(int device) {
  std::string why;
  for (const DeviceInfo& d : usable_devices(&why))
    if (d.index == device) return d;
  throw CudaError(cudaErrorInvalidDevice, "CUDA device " + std::to_string(device) + " is not usable" +
                                              (why.empty() ? std::string() : ": " + why));
}

}  // namespace

struct CudaEngine::Lane {
  Stream stream;
  DeviceBuffer in, out;
  void reserve(std::size_t in_bytes, std::size_t out_bytes) {
    if (in.size() < in_bytes) in = DeviceBuffer(in_bytes, "staging the sources of a GPU multiply");
    if (out.size() < out_bytes) out = DeviceBuffer(out_bytes, "staging the outputs of a GPU multiply");
  }
};

CudaEngine::CudaEngine(int device, Kernel kernel) : info_(open_device(device)), kernel_(kernel) {
  DeviceGuard guard(device);
  // A tiny product proves the context starts and that the kernels were compiled for this GPU
  // ("no kernel image is available" otherwise) before anyone relies on the engine.
  DeviceMatrix probe_src(1, 4, "the engine's start-up check"), probe_dst(1, 4, "the engine's start-up check");
  DeviceBuffer probe_coef(1, "the engine's start-up check");
  check(cudaMemset(probe_coef.get(), 3, 1), "starting the device");
  check(cudaMemset(probe_src.ref().data, 7, 4), "starting the device");
  gpu::multiply(kernel_, {{probe_coef.get(), 1, 1, 1}, probe_src.cref(), probe_dst.ref()}, false, nullptr);
  std::uint8_t result[4] = {};
  check(cudaMemcpy(result, probe_dst.ref().data, 4, cudaMemcpyDeviceToHost), "running the start-up check");
  if (result[0] != 9 || result[3] != 9)  // 3·7 = 7 ^ 14 in GF(2^8)
    throw CudaError(cudaErrorUnknown,
                    "CUDA device " + std::to_string(device) + " computed a wrong product in the start-up check");
  for (std::size_t i = 0; i < kLanes; ++i) lanes_.push_back(std::make_unique<Lane>());
}

CudaEngine::~CudaEngine() {
  // Buffers and streams are released on this engine's device.
  int current = -1;
  if (cudaGetDevice(&current) == cudaSuccess && current != info_.index) cudaSetDevice(info_.index);
  lanes_.clear();
  coefs_ = DeviceBuffer();
  if (current >= 0 && current != info_.index) cudaSetDevice(current);
}

std::string CudaEngine::description() const {
  return "cuda " + describe(info_) + " " + std::string(to_string(kernel_));
}

void CudaEngine::multiply_device(ConstDeviceMatrixRef coefs, ConstDeviceMatrixRef src, DeviceMatrixRef dst,
                                 bool accumulate, cudaStream_t stream) const {
  DeviceGuard guard(info_.index);
  gpu::multiply(kernel_, {coefs, src, dst}, accumulate, stream);
}

std::size_t CudaEngine::chunk_columns(std::size_t m, std::size_t k, std::size_t len) const {
  // Sixteen or more chunks keep the pipeline's fill and drain short (copy in, compute and copy out of
  // different chunks overlap); rows of at least 64 KiB keep each copy efficient; a lane's staging
  // bounds both.
  const std::size_t by_staging = std::max<std::size_t>(kLaneBytes / (m + k), kColumnAlign);
  std::size_t chunk = std::max<std::size_t>((len + 4 * kLanes - 1) / (4 * kLanes), std::size_t{64} << 10);
  chunk = std::min({chunk, by_staging, len});
  return (chunk + kColumnAlign - 1) / kColumnAlign * kColumnAlign;
}

void CudaEngine::multiply(const std::uint8_t* coefs, std::size_t m, std::size_t k, const std::uint8_t* const* ins,
                          std::uint8_t* const* outs, std::size_t len, bool accumulate) {
  if (m == 0 || len == 0) return;
  std::lock_guard lock(mutex_);
  DeviceGuard guard(info_.index);

  if (coefs_.size() < m * k) coefs_ = DeviceBuffer(m * k, "the coefficients of a GPU multiply");
  const std::size_t chunk = chunk_columns(m, k, len);
  const std::size_t pitch = chunk;  // a multiple of 128
  for (auto& lane : lanes_) lane->reserve(std::max<std::size_t>(k, 1) * pitch, m * pitch);

  try {
    // Every lane reads the coefficients: have them on the device before any lane starts.
    const cudaStream_t first = lanes_[0]->stream.get();
    if (m * k > 0) {
      check(cudaMemcpyAsync(coefs_.get(), coefs, m * k, cudaMemcpyHostToDevice, first),
            "copying coefficients to the device");
      lanes_[0]->stream.synchronize("copying coefficients to the device");
    }
    // Chunk c runs on lane c % kLanes; a lane's own stream orders the reuse of its staging.
    std::size_t c = 0;
    for (std::size_t col0 = 0; col0 < len; col0 += chunk, ++c) {
      Lane& lane = *lanes_[c % kLanes];
      const std::size_t width = std::min(chunk, len - col0);
      const cudaStream_t s = lane.stream.get();
      DeviceMatrixRef in{lane.in.get(), k, width, pitch}, out{lane.out.get(), m, width, pitch};
      copy_rows_to_device(in, ins, k, col0, width, s);
      if (accumulate) copy_rows_to_device(out, outs, m, col0, width, s);
      gpu::multiply(kernel_, {{coefs_.get(), m, k, k}, in, out}, accumulate, s);
      copy_rows_to_host(outs, out, m, col0, width, s);
    }
    for (auto& lane : lanes_) lane->stream.synchronize("finishing a GPU multiply");
  } catch (...) {
    // Nothing may still be reading the staging or the caller's buffers once the error is out.
    for (auto& lane : lanes_) cudaStreamSynchronize(lane->stream.get());
    throw;
  }
}

}  // namespace ncast::gpu
