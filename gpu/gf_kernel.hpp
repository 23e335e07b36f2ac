#pragma once
// The GF(2^8) matrix-product kernels the engine chooses from, D = C·S (or D ^= C·S) over device
// memory. (The seed papers' techniques, ncast-bench's anchors, live in tools/bench/baselines/.)
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>

#include <vector>

#include "gpu/device_matrix.hpp"
#include "gpu/device_memory.hpp"
#include "gpu/kernel_launch.hpp"

namespace ncast::gpu {

enum class Kernel {
  prmt,       // split 3+3+2-bit product tables held in registers, looked up with PRMT (__byte_perm)
  bitslice,   // bit planes; per source a shared-memory table of all 256 XOR combinations of its planes,
              // one lookup per output plane by the rows of the coefficient's bit matrix
  tensor_b1,  // one GF(2) product on the b1 tensor cores (wgmma AND+POPC, sm_90a); where the device
              // has no sm_90a image, the fastest CUDA-core kernel for the shape instead
  automatic,  // per launch, the fastest of the above for the shape (fastest_kernel)
};

std::string_view to_string(Kernel kernel);
std::optional<Kernel> parse_kernel(std::string_view name);
std::span<const Kernel> all_kernels();

// What Kernel::automatic runs for `count` products of at most max_m outputs of max_len bytes from
// k sources, on the current device: tensor_b1 where the device runs it and it was measured faster
// (see the definition); otherwise bitslice where its 128-output, 1024-column blocks fill the GPU and
// have enough outputs and sources to share each table, else prmt.
Kernel fastest_kernel(std::size_t max_m, std::size_t k, std::size_t max_len, std::size_t count = 1);
// Whether the current device runs the tensor_b1 kernel itself (an sm_90a GPU).
bool tensor_kernel_available();

// The prmt kernel's register tile: each thread keeps `outputs` × `words` 32-bit accumulators.
struct PrmtTile {
  int outputs, words;
};
// Every tile compiled in; automatic choice picks from these by the number of outputs.
std::span<const PrmtTile> prmt_tiles();
PrmtTile prmt_tile_for(std::size_t outputs);

// One product: coefs is m×k (any pitch and alignment), src k×len and dst m×len in the kernels'
// layout (see device_matrix.hpp). dst must not overlap src or coefs.
struct Product {
  ConstDeviceMatrixRef coefs, src;
  DeviceMatrixRef dst;
};

// Enqueues D = C·S (D ^= C·S when accumulate) on stream. Throws std::invalid_argument for
// mismatched shapes or layouts and CudaError when the launch fails. tile only affects prmt.
void multiply(Kernel kernel, const Product& product, bool accumulate, cudaStream_t stream,
              std::optional<PrmtTile> tile = std::nullopt);

// Many products, of any shapes, in one launch: how one call serves requests across many segments.
// The descriptors go to the device on the stream of multiply(); keep to one stream per batch object,
// since the next multiply() reuses the device copy.
class ProductBatch {
 public:
  // Validates as multiply() does (std::invalid_argument); empty products are dropped. skip, when not
  // null, is a device int: if it is non-zero when the launch runs, this product is left alone.
  void add(const Product& product, const int* skip = nullptr);
  void clear();
  std::size_t size() const { return problems_.size(); }
  // Enqueues every product added since the last clear(); tile defaults to the one for the largest m.
  void multiply(Kernel kernel, bool accumulate, cudaStream_t stream, std::optional<PrmtTile> tile = std::nullopt);

 private:
  std::vector<detail::KernelProblem> problems_;
  PinnedBuffer staging_;  // the copy source, rewritten only after the last copy from it completed
  DeviceBuffer device_;
  std::unique_ptr<Event> copied_;
  std::size_t max_m_ = 0, max_len_ = 0, max_k_ = 0;
};

namespace detail {
// The launch arguments of one product, after the checks of multiply() (std::invalid_argument);
// nullopt when there is nothing to compute. For kernels outside this dispatcher (the bench's
// baselines) that take the same arguments.
std::optional<KernelArgs> single_product_args(const Product& product, bool accumulate);
}  // namespace detail

}  // namespace ncast::gpu
