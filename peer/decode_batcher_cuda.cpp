// make_gpu_decode_batcher() of CUDA builds: each batch goes to gpu::BatchDecoder. It is packed into
// one page-locked staging buffer (the coefficient matrices, then the payloads, rows padded to 16
// octets as the kernels want them), goes to the device in one copy, is decoded by one call (every
// inversion in one launch, every product in one more) and comes back in one copy; the batcher's thread
// blocks meanwhile rather than spinning.
#include <cuda_runtime.h>

#include <cstring>
#include <stdexcept>
#include <vector>

#include "gpu/batch_decoder.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/device_info.hpp"
#include "gpu/device_memory.hpp"
#include "peer/decoder_factory.hpp"

namespace ncast::peer {
namespace {

constexpr std::size_t padded(std::size_t bytes) { return (bytes + 15) / 16 * 16; }

class GpuBatchBackend final : public BatchDecodeBackend {
 public:
  explicit GpuBatchBackend(const gpu::DeviceInfo& device) : device_(device.index), name_(gpu::describe(device)) {
    gpu::DeviceGuard guard(device_);
    // The batcher's thread waits for every batch. With one context CUDA would spin for it, a core
    // taken from the peers for as long as the GPU decodes; blocked, it costs nothing meanwhile. (The
    // flag is the device's, for this whole process: in ncast-swarm the batcher is its only CUDA user.)
    unsigned flags = 0;
    gpu::check(cudaGetDeviceFlags(&flags), "reading the device's flags");
    gpu::check(cudaSetDeviceFlags((flags & ~cudaDeviceScheduleMask) | cudaDeviceScheduleBlockingSync),
               "letting the decode batches block");
    stream_ = std::make_unique<gpu::Stream>();
    decoder_ = std::make_unique<gpu::BatchDecoder>();
  }
  ~GpuBatchBackend() override {
    gpu::DeviceGuard guard(device_);
    decoder_.reset();
    stream_.reset();
  }

  std::string description() const override { return "gpu " + name_; }

  void decode(std::span<BatchJob* const> jobs) override {
    // The batcher's thread: make the device current here.
    gpu::DeviceGuard guard(device_);
    coef_at_.resize(jobs.size());
    row_at_.resize(jobs.size());
    std::size_t coef_bytes = 0, row_bytes = 0;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      coef_at_[i] = coef_bytes;
      row_at_[i] = row_bytes;
      coef_bytes += jobs[i]->n * padded(jobs[i]->n);
      row_bytes += jobs[i]->n * padded(jobs[i]->symbol_size);
    }
    // Room for a fifth more than asked, so that batches of slowly growing size do not reallocate each time.
    if (host_.size() < coef_bytes + row_bytes)
      host_ = gpu::PinnedBuffer((coef_bytes + row_bytes) * 5 / 4, "decode batch staging");
    if (device_buffer_.size() < coef_bytes + 2 * row_bytes)
      device_buffer_ = gpu::DeviceBuffer((coef_bytes + 2 * row_bytes) * 5 / 4, "decode batch");
    std::uint8_t* host = host_.get();
    std::uint8_t* dev = device_buffer_.get();
    std::uint8_t *host_rows = host + coef_bytes, *dev_rows = dev + coef_bytes, *dev_out = dev_rows + row_bytes;

    device_jobs_.clear();
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      const BatchJob& j = *jobs[i];
      const std::size_t n = j.n, L = j.symbol_size, cp = padded(n), rp = padded(L);
      for (std::size_t r = 0; r < n; ++r) {
        std::memcpy(host + coef_at_[i] + r * cp, j.coefs.data() + r * n, n);
        std::memcpy(host_rows + row_at_[i] + r * rp, j.rows.data() + r * L, L);
      }
      device_jobs_.push_back({gpu::ConstDeviceMatrixRef(dev + coef_at_[i], n, n, cp),
                              gpu::ConstDeviceMatrixRef(dev_rows + row_at_[i], n, L, rp),
                              gpu::DeviceMatrixRef{dev_out + row_at_[i], n, L, rp}});
    }
    gpu::check(cudaMemcpyAsync(dev, host, coef_bytes + row_bytes, cudaMemcpyHostToDevice, stream_->get()),
               "copying a decode batch to the device");
    const std::vector<bool> ok = decoder_->decode(device_jobs_, stream_->get());
    gpu::check(cudaMemcpyAsync(host_rows, dev_out, row_bytes, cudaMemcpyDeviceToHost, stream_->get()),
               "copying a decoded batch back");
    stream_->synchronize("decoding a batch");
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      BatchJob& j = *jobs[i];
      j.ok = ok[i];
      if (!j.ok) continue;
      const std::size_t L = j.symbol_size, rp = padded(L);
      for (std::size_t r = 0; r < j.n; ++r) std::memcpy(j.rows.data() + r * L, host_rows + row_at_[i] + r * rp, L);
    }
  }

 private:
  int device_;
  std::string name_;
  std::unique_ptr<gpu::Stream> stream_;
  std::unique_ptr<gpu::BatchDecoder> decoder_;
  gpu::PinnedBuffer host_;
  gpu::DeviceBuffer device_buffer_;
  std::vector<std::size_t> coef_at_, row_at_;
  std::vector<gpu::DecodeJob> device_jobs_;
};

}  // namespace

std::shared_ptr<DecodeBatcher> make_gpu_decode_batcher(const BatchOptions& options) {
  std::string why;
  const auto devices = gpu::usable_devices(&why);
  if (devices.empty()) throw std::runtime_error("--decoder gpu: no usable CUDA device: " + why);
  try {
    return std::make_shared<DecodeBatcher>(std::make_unique<GpuBatchBackend>(devices.front()), options);
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("--decoder gpu: ") + e.what());
  }
}

}  // namespace ncast::peer
