// make_decoder_factory() of CUDA builds: the GPU progressive decoder when asked for (gpu) or when a
// device is usable (auto). One gpu::ProgressiveDecoder holds every segment of the receiver's window,
// one generation each. A symbol is decoded as it arrives (one round of one arrival), so rank and
// innovation are known at once, as the receiver and its ACKs need; that costs a few kernel launches
// and a synchronisation per symbol, which pays off for large generations (n·L of megabytes), not for
// the default 128 × 1 KiB, where the CPU decoder is faster.
#include <cuda_runtime.h>

#include <stdexcept>
#include <vector>

#include "coding/rlnc/error.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/device_info.hpp"
#include "gpu/progressive_decoder.hpp"
#include "peer/decoder_factory.hpp"

namespace ncast::peer {
namespace {

class GpuSegmentDecoder final : public SegmentDecoder {
 public:
  GpuSegmentDecoder(std::shared_ptr<gpu::ProgressiveDecoder> gpu, std::uint32_t id,
                    const rlnc::GenerationLayout& layout, const rlnc::SeedContext& seeds)
      : gpu_(std::move(gpu)), id_(id), layout_(layout), seeds_(seeds) {
    gpu_->open(id_, layout_, seeds_);
  }
  ~GpuSegmentDecoder() override { gpu_->close(id_); }
  GpuSegmentDecoder(const GpuSegmentDecoder&) = delete;
  GpuSegmentDecoder& operator=(const GpuSegmentDecoder&) = delete;

  rlnc::AddResult add(const rlnc::SymbolView& symbol) override {
    const gpu::ProgressiveDecoder::Arrival arrival{id_, symbol};
    gpu::ProgressiveDecoder::Outcome outcome;
    gpu_->add({&arrival, 1}, {&outcome, 1});
    if (outcome.status == gpu::ProgressiveDecoder::Status::rejected)
      throw rlnc::Error(outcome.error, "GPU decoder: " + std::string(rlnc::to_string(outcome.error)));
    if (outcome.status == gpu::ProgressiveDecoder::Status::non_innovative) return rlnc::AddResult::non_innovative;
    downloaded_ = false;
    return rlnc::AddResult::innovative;
  }
  void reset() override {
    gpu_->open(id_, layout_, seeds_);
    downloaded_ = false;
  }
  const rlnc::GenerationLayout& layout() const override { return layout_; }
  std::size_t rank() const override { return gpu_->rank(id_); }
  std::span<const std::uint8_t> data() override {
    if (!downloaded_) {
      host_.resize(layout_.data_bytes());
      gpu_->download(id_, host_);
      downloaded_ = true;
    }
    return host_;
  }
  const rlnc::Decoder* host_rows() const override { return nullptr; }

 private:
  std::shared_ptr<gpu::ProgressiveDecoder> gpu_;
  std::uint32_t id_;
  rlnc::GenerationLayout layout_;
  rlnc::SeedContext seeds_;
  std::vector<std::uint8_t> host_;
  bool downloaded_ = false;
};

class GpuDecoderFactory final : public DecoderFactory {
 public:
  explicit GpuDecoderFactory(const gpu::DeviceInfo& device) : device_(gpu::describe(device)) {
    gpu::check(cudaSetDevice(device.index), "selecting the decoder's device");
    gpu_ = std::make_shared<gpu::ProgressiveDecoder>();
  }
  std::string description() const override { return "gpu " + device_; }
  std::unique_ptr<SegmentDecoder> open(const rlnc::GenerationLayout& layout, const rlnc::SeedContext& seeds) override {
    return std::make_unique<GpuSegmentDecoder>(gpu_, next_id_++, layout, seeds);
  }

 private:
  std::string device_;
  std::shared_ptr<gpu::ProgressiveDecoder> gpu_;
  std::uint32_t next_id_ = 0;
};

}  // namespace

std::unique_ptr<DecoderFactory> make_decoder_factory(DecoderChoice choice) {
  if (choice == DecoderChoice::cpu) return make_cpu_decoder_factory();
  std::string why;
  const auto devices = gpu::usable_devices(&why);
  if (choice == DecoderChoice::gpu) {
    if (devices.empty()) throw std::runtime_error("--decoder gpu: no usable CUDA device: " + why);
    try {
      return std::make_unique<GpuDecoderFactory>(devices.front());
    } catch (const std::exception& e) {
      throw std::runtime_error(std::string("--decoder gpu: ") + e.what());
    }
  }
  if (!devices.empty()) {
    try {
      return std::make_unique<GpuDecoderFactory>(devices.front());
    } catch (const std::exception&) {
      // Unusable after all: the CPU decodes (the report names the decoder).
    }
  }
  return make_cpu_decoder_factory();
}

}  // namespace ncast::peer
