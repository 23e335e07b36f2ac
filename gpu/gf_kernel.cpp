#include "gpu/gf_kernel.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <stdexcept>
#include <string>

#include "gpu/cuda_check.hpp"
#include "gpu/kernel_launch.hpp"
#include "gpu/kernel_tensor.hpp"

namespace ncast::gpu {
namespace {

constexpr Kernel kKernels[] = {Kernel::prmt, Kernel::bitslice, Kernel::tensor_b1, Kernel::automatic};
constexpr PrmtTile kTiles[] = {{4, 2}, {4, 4}, {8, 2}, {8, 4}, {16, 2}, {16, 4}, {32, 2}, {32, 4}};

std::string shape_text(const char* name, std::size_t rows, std::size_t cols) {
  return std::string(name) + " " + std::to_string(rows) + "x" + std::to_string(cols);
}

}  // namespace

std::string_view to_string(Kernel kernel) {
  switch (kernel) {
    case Kernel::prmt: return "prmt";
    case Kernel::bitslice: return "bitslice";
    case Kernel::tensor_b1: return "tensor-b1";
    case Kernel::automatic: return "auto";
  }
  return "unknown";
}

std::optional<Kernel> parse_kernel(std::string_view name) {
  for (Kernel k : kKernels)
    if (name == to_string(k)) return k;
  return std::nullopt;
}

std::span<const Kernel> all_kernels() { return kKernels; }

bool tensor_kernel_available() {
  // Asked once per device: whether the sm_90a image loads there.
  constexpr int kDevices = 64;
  static std::atomic<int> known[kDevices];  // 0 not asked yet, 1 absent, 2 present
  int device = 0;
  check(cudaGetDevice(&device), "reading the current device");
  if (device < 0 || device >= kDevices) return detail::tensor_kernel_present();
  int state = known[device].load(std::memory_order_relaxed);
  if (state == 0) {
    state = detail::tensor_kernel_present() ? 2 : 1;
    known[device].store(state, std::memory_order_relaxed);
  }
  return state == 2;
}

namespace {

Kernel fastest_cuda_core_kernel(std::size_t max_m, std::size_t k, std::size_t max_len, std::size_t count) {
  // bitslice builds 256 table entries per source and lane for the block's outputs (up to 128): with
  // fewer than 64 outputs or a handful of sources the build and the per-block epilogue dominate; and
  // its blocks are large (one per SM), so a launch of fewer blocks than SMs leaves the GPU idle where
  // prmt's small tiles would not.
  if (max_m < 64 || k < 16) return Kernel::prmt;
  int device = 0, sms = 0;
  check(cudaGetDevice(&device), "reading the current device");
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "reading the SM count");
  const std::size_t blocks = count * ((max_len + 1023) / 1024) * ((max_m + 127) / 128);
  return blocks >= static_cast<std::size_t>(sms) ? Kernel::bitslice : Kernel::prmt;
}

// The tensor kernel works on sources in steps of 32 and packs its low bits at the same cost per output
// byte whatever k, so it pays for many outputs, or for several outputs of many sources; below that
// prmt's per-source cost is lower (docs/gpu.md, "The automatic choice", has the measured bounds).
bool tensor_wins(std::size_t max_m, std::size_t k) { return (max_m >= 16 && k >= 16) || (max_m >= 5 && k >= 32); }

}  // namespace

Kernel fastest_kernel(std::size_t max_m, std::size_t k, std::size_t max_len, std::size_t count) {
  if (tensor_wins(max_m, k) && tensor_kernel_available()) return Kernel::tensor_b1;
  return fastest_cuda_core_kernel(max_m, k, max_len, count);
}

std::span<const PrmtTile> prmt_tiles() { return kTiles; }

PrmtTile prmt_tile_for(std::size_t outputs) {
  // The smallest tile that holds every output wastes no accumulators; past 32 outputs the largest
  // tile amortises the selectors over the most outputs.
  for (int mt : {4, 8, 16})
    if (outputs <= static_cast<std::size_t>(mt)) return {mt, 4};
  return {32, 4};
}

namespace {

// The kernel's view of a product, after the checks every launch needs; nullopt when there is
// nothing to compute.
std::optional<detail::KernelProblem> checked(const Product& product) {
  const auto& [coefs, src, dst] = product;
  const std::size_t m = dst.rows, k = src.rows, len = dst.cols;
  if (coefs.rows != m || coefs.cols != k || src.cols != len)
    throw std::invalid_argument(
        "GPU multiply: shapes do not fit: " + shape_text("coefficients", coefs.rows, coefs.cols) + ", " +
        shape_text("sources", src.rows, src.cols) + ", " + shape_text("outputs", dst.rows, dst.cols));
  if (m == 0 || len == 0) return std::nullopt;
  if (k > 0 && (coefs.data == nullptr || coefs.pitch < k))
    throw std::invalid_argument("GPU multiply: coefficient matrix needs a device pointer and a pitch of at least k");
  require_kernel_layout(src, "GPU multiply sources");
  require_kernel_layout(dst, "GPU multiply outputs");
  return detail::KernelProblem{coefs.data, coefs.pitch, src.data, src.pitch, dst.data, dst.pitch, m, k, len, nullptr};
}

PrmtTile checked_tile(std::optional<PrmtTile> tile, std::size_t m) {
  const PrmtTile t = tile.value_or(prmt_tile_for(m));
  if (std::none_of(std::begin(kTiles), std::end(kTiles),
                   [&](const PrmtTile& c) { return c.outputs == t.outputs && c.words == t.words; }))
    throw std::invalid_argument("GPU multiply: prmt tile " + std::to_string(t.outputs) + "x" + std::to_string(t.words) +
                                " is not compiled in");
  return t;
}

void launch(Kernel kernel, const detail::KernelArgs& args, std::size_t k, PrmtTile tile, cudaStream_t stream) {
  if (kernel == Kernel::automatic) kernel = fastest_kernel(args.max_m, k, args.max_len, args.count);
  switch (kernel) {
    case Kernel::prmt: return detail::launch_prmt(args, tile.outputs, tile.words, stream);
    case Kernel::bitslice: return detail::launch_bitslice(args, stream);
    case Kernel::tensor_b1:
      if (tensor_kernel_available()) return detail::launch_tensor(args, k, stream);
      return launch(fastest_cuda_core_kernel(args.max_m, k, args.max_len, args.count), args, k, tile, stream);
    case Kernel::automatic: break;
  }
  throw std::invalid_argument("GPU multiply: unknown kernel");
}

}  // namespace

std::optional<detail::KernelArgs> detail::single_product_args(const Product& product, bool accumulate) {
  const auto problem = checked(product);
  if (!problem) return std::nullopt;
  return KernelArgs{problem->m, problem->len, accumulate, *problem, nullptr, 1};
}

void multiply(Kernel kernel, const Product& product, bool accumulate, cudaStream_t stream,
              std::optional<PrmtTile> tile) {
  const auto args = detail::single_product_args(product, accumulate);
  if (!args) return;
  launch(kernel, *args, args->one.k, checked_tile(tile, args->max_m), stream);
}

void ProductBatch::add(const Product& product, const int* skip) {
  if (auto problem = checked(product)) {
    problem->skip = skip;
    problems_.push_back(*problem);
    max_m_ = std::max(max_m_, problem->m);
    max_len_ = std::max(max_len_, problem->len);
    max_k_ = std::max(max_k_, problem->k);
  }
}

void ProductBatch::clear() {
  problems_.clear();
  max_m_ = max_len_ = max_k_ = 0;
}

void ProductBatch::multiply(Kernel kernel, bool accumulate, cudaStream_t stream, std::optional<PrmtTile> tile) {
  if (problems_.empty()) return;
  const PrmtTile t = checked_tile(tile, max_m_);
  const std::size_t bytes = problems_.size() * sizeof(detail::KernelProblem);
  if (copied_) copied_->synchronize();
  else copied_ = std::make_unique<Event>();
  if (staging_.size() < bytes) staging_ = PinnedBuffer(bytes, "the descriptors of a batched GPU multiply");
  if (device_.size() < bytes) device_ = DeviceBuffer(bytes, "the descriptors of a batched GPU multiply");
  std::memcpy(staging_.get(), problems_.data(), bytes);
  check(cudaMemcpyAsync(device_.get(), staging_.get(), bytes, cudaMemcpyHostToDevice, stream),
        "copying batch descriptors to the device");
  copied_->record(stream);
  const auto* all = reinterpret_cast<const detail::KernelProblem*>(device_.get());
  for (std::size_t first = 0; first < problems_.size(); first += detail::kMaxGridYZ) {
    const auto count = static_cast<unsigned>(std::min<std::size_t>(detail::kMaxGridYZ, problems_.size() - first));
    detail::KernelArgs args{max_m_, max_len_, accumulate, problems_[first], all + first, count};
    launch(kernel, args, max_k_, t, stream);
  }
}

}  // namespace ncast::gpu
