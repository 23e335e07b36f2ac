// One block per generation runs the round's arrivals through Gauss–Jordan in arrival order, on
// coefficient vectors only (n bytes each; the payloads follow in batched products, see
// progressive_decoder.cpp). The components along the rows held before the round were already
// removed by a product (reduced = coefs · state), so each arrival is only reduced by the round's
// earlier new rows; its transform records the same operations on the payload side, over the held
// slots and the round's raw payloads. An arrival that reduces to zero is not innovative; otherwise
// it is scaled to a unit at its first non-zero column (its pivot) and that column is cleared from
// the round's earlier new rows. Threads work on columns; products go through log/exp tables.
#include <stdexcept>
#include <string>

#include "gpu/cuda_check.hpp"
#include "gpu/kernel_common.cuh"
#include "gpu/progressive_kernel.hpp"

namespace ncast::gpu::detail {
namespace {

constexpr unsigned kThreads = 256;
constexpr std::uint8_t kNoRow = 0xFF;

__constant__ LogExpTables c_log_exp = make_log_exp_tables();

struct Layout {
  std::uint32_t max_n, max_count, transform_width;
  std::size_t new_rows, transforms, vector, transform, old, pivots, logs, row_of, bytes;
};

__host__ __device__ inline Layout layout_for(std::uint32_t max_n, std::uint32_t max_count) {
  Layout l{max_n, max_count, max_n + max_count, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  l.new_rows = 0;                                              // max_count × max_n
  l.transforms = l.new_rows + std::size_t{max_count} * max_n;  // max_count × transform_width
  l.vector = l.transforms + std::size_t{max_count} * l.transform_width;
  l.transform = l.vector + max_n;
  l.old = l.transform + l.transform_width;
  l.pivots = (l.old + max_n + 1) & ~std::size_t{1};  // uint16
  l.logs = l.pivots + 2 * std::size_t{max_count};    // uint16
  l.row_of = l.logs + 2 * std::size_t{max_count};
  l.bytes = l.row_of + max_count;
  return l;
}

__global__ void __launch_bounds__(kThreads)
    eliminate_kernel(const EliminateJob* jobs, std::uint32_t max_n, std::uint32_t max_count) {
  extern __shared__ __align__(16) std::uint8_t smem[];
  __shared__ std::uint16_t sh_log[256];
  __shared__ std::uint8_t sh_exp[1024];
  __shared__ std::uint32_t pivot, held;  // the arrival's pivot column (n: none); new rows so far
  const Layout l = layout_for(max_n, max_count);
  std::uint8_t* rows = smem + l.new_rows;  // new row i at rows + i·max_n
  std::uint8_t* trans = smem + l.transforms;
  std::uint8_t* v = smem + l.vector;
  std::uint8_t* t = smem + l.transform;
  std::uint8_t* old = smem + l.old;  // column c is a pivot of the state
  auto* pivots = reinterpret_cast<std::uint16_t*>(smem + l.pivots);
  auto* logs = reinterpret_cast<std::uint16_t*>(smem + l.logs);
  std::uint8_t* row_of = smem + l.row_of;  // new row of arrival j, or kNoRow
  const std::uint32_t tw = l.transform_width;

  const EliminateJob job = jobs[blockIdx.x];
  const std::uint32_t n = job.n, count = job.count, width = n + count, tid = threadIdx.x;
  for (std::uint32_t i = tid; i < 256; i += kThreads) sh_log[i] = c_log_exp.log[i];
  for (std::uint32_t i = tid; i < 1024; i += kThreads) sh_exp[i] = c_log_exp.exp[i];
  for (std::uint32_t c = tid; c < n; c += kThreads) old[c] = job.state[c * job.state_pitch + c] != 0;
  if (tid == 0) held = 0;
  __syncthreads();
  // a·b with log a given; log 0 is a sentinel that lands in the zero part of exp
  auto times = [&](std::uint32_t log_a, std::uint8_t b) { return sh_exp[log_a + sh_log[b]]; };

  for (std::uint32_t j = 0; j < count; ++j) {
    const std::uint8_t* raw = job.coefs + j * job.vector_pitch;
    const std::uint8_t* reduced = job.reduced + j * job.vector_pitch;
    for (std::uint32_t c = tid; c < n; c += kThreads) {
      v[c] = raw[c] ^ reduced[c];  // zero in every held pivot column
      t[c] = old[c] ? raw[c] : 0;  // the held slots it was reduced by
    }
    for (std::uint32_t c = n + tid; c < width; c += kThreads) t[c] = c - n == j;  // its own raw payload
    if (tid == 0) pivot = n;
    const std::uint32_t h = held;
    __syncthreads();
    for (std::uint32_t i = tid; i < h; i += kThreads) logs[i] = sh_log[v[pivots[i]]];
    __syncthreads();
    // Reduce by the round's earlier new rows (zero in each other's pivots, so independently).
    for (std::uint32_t c = tid; c < n; c += kThreads) {
      std::uint8_t a = v[c];
      for (std::uint32_t i = 0; i < h; ++i) a ^= times(logs[i], rows[i * max_n + c]);
      v[c] = a;
      if (a != 0) atomicMin(&pivot, c);
    }
    for (std::uint32_t c = tid; c < width; c += kThreads) {
      std::uint8_t a = t[c];
      for (std::uint32_t i = 0; i < h; ++i) a ^= times(logs[i], trans[i * tw + c]);
      t[c] = a;
    }
    __syncthreads();
    const std::uint32_t p = pivot;
    if (p < n) {  // innovative: a unit at p becomes new row h
      const std::uint32_t log_inverse = 255 - sh_log[v[p]];
      for (std::uint32_t c = tid; c < n; c += kThreads) rows[h * max_n + c] = times(log_inverse, v[c]);
      for (std::uint32_t c = tid; c < width; c += kThreads) trans[h * tw + c] = times(log_inverse, t[c]);
      __syncthreads();
      for (std::uint32_t i = tid; i < h; i += kThreads) logs[i] = sh_log[rows[i * max_n + p]];
      __syncthreads();
      for (std::uint32_t c = tid; c < n; c += kThreads) {
        const std::uint8_t b = rows[h * max_n + c];
        for (std::uint32_t i = 0; i < h; ++i) rows[i * max_n + c] ^= times(logs[i], b);
      }
      for (std::uint32_t c = tid; c < width; c += kThreads) {
        const std::uint8_t b = trans[h * tw + c];
        for (std::uint32_t i = 0; i < h; ++i) trans[i * tw + c] ^= times(logs[i], b);
      }
      if (tid == 0) {
        pivots[h] = static_cast<std::uint16_t>(p);
        row_of[j] = static_cast<std::uint8_t>(h);
        held = h + 1;
      }
    } else if (tid == 0) {
      row_of[j] = kNoRow;
    }
    __syncthreads();
  }

  // Outputs, zero for the arrivals that were not innovative.
  for (std::uint32_t j = 0; j < count; ++j) {
    const std::uint32_t i = row_of[j];
    for (std::uint32_t c = tid; c < width; c += kThreads)
      job.transforms[j * job.transform_pitch + c] = i == kNoRow ? 0 : trans[i * tw + c];
    for (std::uint32_t c = tid; c < n; c += kThreads)
      job.new_rows[j * job.vector_pitch + c] = i == kNoRow ? 0 : rows[i * max_n + c];
    if (tid == 0) job.flags[j] = i != kNoRow;
  }
  for (std::uint32_t c = tid; c < n; c += kThreads)
    for (std::uint32_t j = 0; j < count; ++j) {
      const std::uint32_t i = row_of[j];
      std::uint8_t mix = 0;
      if (i != kNoRow) mix = old[c] ? job.state[c * job.state_pitch + pivots[i]] : c == pivots[i];
      job.mixes[c * job.mix_pitch + j] = mix;
    }
}

}  // namespace

void launch_eliminate(const EliminateJob* jobs, std::size_t count, std::uint32_t max_n, std::uint32_t max_count,
                      cudaStream_t stream) {
  if (count == 0) return;
  if (max_n < 1 || max_n > 256 || max_count < 1 || max_count > kMaxRound)
    throw std::invalid_argument("progressive elimination: n " + std::to_string(max_n) + " or round " +
                                std::to_string(max_count) + " out of range");
  const Layout l = layout_for(max_n, max_count);
  check(cudaFuncSetAttribute(eliminate_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(l.bytes)),
        "allowing the elimination kernel its shared memory");
  for (std::size_t first = 0; first < count; first += 65535) {
    const auto blocks = static_cast<unsigned>(count - first < 65535 ? count - first : 65535);
    eliminate_kernel<<<blocks, kThreads, l.bytes, stream>>>(jobs + first, max_n, max_count);
    check_launch("eliminate");
  }
}

}  // namespace ncast::gpu::detail
