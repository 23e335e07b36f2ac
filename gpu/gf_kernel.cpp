#include "gpu/gf_kernel.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "gpu/kernel_launch.hpp"

namespace ncast::gpu {
namespace {

constexpr Kernel kKernels[] = {Kernel::nuclei_loop, Kernel::gibraltar_logexp, Kernel::product_table, Kernel::prmt};
constexpr PrmtTile kTiles[] = {{4, 2}, {4, 4}, {8, 2}, {8, 4}, {16, 2}, {16, 4}, {32, 2}, {32, 4}};

std::string shape_text(const char* name, std::size_t rows, std::size_t cols) {
  return std::string(name) + " " + std::to_string(rows) + "x" + std::to_string(cols);
}

}  // namespace

std::string_view to_string(Kernel kernel) {
  switch (kernel) {
    case Kernel::nuclei_loop: return "nuclei-loop";
    case Kernel::gibraltar_logexp: return "gibraltar-logexp";
    case Kernel::product_table: return "product-table";
    case Kernel::prmt: return "prmt";
  }
  return "unknown";
}

std::optional<Kernel> parse_kernel(std::string_view name) {
  for (Kernel k : kKernels)
    if (name == to_string(k)) return k;
  return std::nullopt;
}

std::span<const Kernel> all_kernels() { return kKernels; }

bool is_seed_style(Kernel kernel) { return kernel != Kernel::prmt; }

std::span<const PrmtTile> prmt_tiles() { return kTiles; }

PrmtTile prmt_tile_for(std::size_t outputs) {
  // The smallest tile that holds every output wastes no accumulators; past 32 outputs the largest
  // tile amortises the selectors over the most outputs.
  for (int mt : {4, 8, 16})
    if (outputs <= static_cast<std::size_t>(mt)) return {mt, 4};
  return {32, 4};
}

void multiply(Kernel kernel, const Product& product, bool accumulate, cudaStream_t stream,
              std::optional<PrmtTile> tile) {
  const auto& [coefs, src, dst] = product;
  const std::size_t m = dst.rows, k = src.rows, len = dst.cols;
  if (coefs.rows != m || coefs.cols != k || src.cols != len)
    throw std::invalid_argument("GPU multiply: shapes do not fit: " + shape_text("coefficients", coefs.rows, coefs.cols) +
                                ", " + shape_text("sources", src.rows, src.cols) + ", " +
                                shape_text("outputs", dst.rows, dst.cols));
  if (m == 0 || len == 0) return;
  if (k > 0 && (coefs.data == nullptr || coefs.pitch < k))
    throw std::invalid_argument("GPU multiply: coefficient matrix needs a device pointer and a pitch of at least k");
  require_kernel_layout(src, "GPU multiply sources");
  require_kernel_layout(dst, "GPU multiply outputs");

  detail::KernelArgs args{};
  args.m = m, args.k = k, args.len = len, args.accumulate = accumulate;
  args.one = {coefs.data, coefs.pitch, src.data, src.pitch, dst.data, dst.pitch};
  args.batch = nullptr;
  args.count = 1;
  switch (kernel) {
    case Kernel::nuclei_loop: return detail::launch_nuclei_loop(args, stream);
    case Kernel::gibraltar_logexp: return detail::launch_gibraltar_logexp(args, stream);
    case Kernel::product_table: return detail::launch_product_table(args, stream);
    case Kernel::prmt: {
      const PrmtTile t = tile.value_or(prmt_tile_for(m));
      if (std::none_of(std::begin(kTiles), std::end(kTiles),
                       [&](const PrmtTile& c) { return c.outputs == t.outputs && c.words == t.words; }))
        throw std::invalid_argument("GPU multiply: prmt tile " + std::to_string(t.outputs) + "x" +
                                    std::to_string(t.words) + " is not compiled in");
      return detail::launch_prmt(args, t.outputs, t.words, stream);
    }
  }
  throw std::invalid_argument("GPU multiply: unknown kernel");
}

}  // namespace ncast::gpu
