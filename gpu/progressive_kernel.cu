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

// Products through log/exp tables in shared memory: a·b with log a given; log 0 is a sentinel that
// lands in the zero part of exp.
struct LogExp {
  const std::uint16_t* log;
  const std::uint8_t* exp;
  __device__ std::uint8_t times(std::uint32_t log_a, std::uint8_t b) const { return exp[log_a + log[b]]; }
};

// A block's working set in shared memory (layout_for) and its job's sizes: the round's new rows and
// their transforms, the arrival being eliminated (v) and its transform (t), which columns are pivots
// of the state (old), each new row's pivot column, scratch logs, and each arrival's new row.
struct Round {
  std::uint8_t *rows, *trans, *v, *t, *old;
  std::uint16_t *pivots, *logs;
  std::uint8_t* row_of;
  std::uint32_t max_n, tw, n, width;
};

// Arrival j reduced by the round's earlier new rows (zero in each other's pivots, so independently),
// its transform beside it; pivot ends as its first non-zero column (n: none).
__device__ __forceinline__ void reduce_arrival(const EliminateJob& job, const Round& r, const LogExp& gf,
                                               std::uint32_t j, std::uint32_t h, std::uint32_t& pivot) {
  const std::uint32_t tid = threadIdx.x;
  const std::uint8_t* raw = job.coefs + j * job.vector_pitch;
  const std::uint8_t* reduced = job.reduced + j * job.vector_pitch;
  for (std::uint32_t c = tid; c < r.n; c += kThreads) {
    r.v[c] = raw[c] ^ reduced[c];    // zero in every held pivot column
    r.t[c] = r.old[c] ? raw[c] : 0;  // the held slots it was reduced by
  }
  for (std::uint32_t c = r.n + tid; c < r.width; c += kThreads) r.t[c] = c - r.n == j;  // its own raw payload
  if (tid == 0) pivot = r.n;
  __syncthreads();
  for (std::uint32_t i = tid; i < h; i += kThreads) r.logs[i] = gf.log[r.v[r.pivots[i]]];
  __syncthreads();
  for (std::uint32_t c = tid; c < r.n; c += kThreads) {
    std::uint8_t a = r.v[c];
    for (std::uint32_t i = 0; i < h; ++i) a ^= gf.times(r.logs[i], r.rows[i * r.max_n + c]);
    r.v[c] = a;
    if (a != 0) atomicMin(&pivot, c);
  }
  for (std::uint32_t c = tid; c < r.width; c += kThreads) {
    std::uint8_t a = r.t[c];
    for (std::uint32_t i = 0; i < h; ++i) a ^= gf.times(r.logs[i], r.trans[i * r.tw + c]);
    r.t[c] = a;
  }
  __syncthreads();
}

// The reduced arrival, innovative with pivot column p, scaled to a unit at p as new row h; column p
// cleared from the earlier new rows.
__device__ __forceinline__ void add_new_row(const Round& r, const LogExp& gf, std::uint32_t h, std::uint32_t p) {
  const std::uint32_t tid = threadIdx.x;
  const std::uint32_t log_inverse = 255 - gf.log[r.v[p]];
  for (std::uint32_t c = tid; c < r.n; c += kThreads) r.rows[h * r.max_n + c] = gf.times(log_inverse, r.v[c]);
  for (std::uint32_t c = tid; c < r.width; c += kThreads) r.trans[h * r.tw + c] = gf.times(log_inverse, r.t[c]);
  __syncthreads();
  for (std::uint32_t i = tid; i < h; i += kThreads) r.logs[i] = gf.log[r.rows[i * r.max_n + p]];
  __syncthreads();
  for (std::uint32_t c = tid; c < r.n; c += kThreads) {
    const std::uint8_t b = r.rows[h * r.max_n + c];
    for (std::uint32_t i = 0; i < h; ++i) r.rows[i * r.max_n + c] ^= gf.times(r.logs[i], b);
  }
  for (std::uint32_t c = tid; c < r.width; c += kThreads) {
    const std::uint8_t b = r.trans[h * r.tw + c];
    for (std::uint32_t i = 0; i < h; ++i) r.trans[i * r.tw + c] ^= gf.times(r.logs[i], b);
  }
}

// The job's outputs, zero for the arrivals that were not innovative.
__device__ __forceinline__ void write_outputs(const EliminateJob& job, const Round& r) {
  const std::uint32_t tid = threadIdx.x;
  for (std::uint32_t j = 0; j < job.count; ++j) {
    const std::uint32_t i = r.row_of[j];
    for (std::uint32_t c = tid; c < r.width; c += kThreads)
      job.transforms[j * job.transform_pitch + c] = i == kNoRow ? 0 : r.trans[i * r.tw + c];
    for (std::uint32_t c = tid; c < r.n; c += kThreads)
      job.new_rows[j * job.vector_pitch + c] = i == kNoRow ? 0 : r.rows[i * r.max_n + c];
    if (tid == 0) job.flags[j] = i != kNoRow;
  }
  for (std::uint32_t c = tid; c < r.n; c += kThreads)
    for (std::uint32_t j = 0; j < job.count; ++j) {
      const std::uint32_t i = r.row_of[j];
      std::uint8_t mix = 0;
      if (i != kNoRow) mix = r.old[c] ? job.state[c * job.state_pitch + r.pivots[i]] : c == r.pivots[i];
      job.mixes[c * job.mix_pitch + j] = mix;
    }
}

__global__ void __launch_bounds__(kThreads)
    eliminate_kernel(const EliminateJob* jobs, std::uint32_t max_n, std::uint32_t max_count) {
  extern __shared__ __align__(16) std::uint8_t smem[];
  __shared__ std::uint16_t sh_log[256];
  __shared__ std::uint8_t sh_exp[1024];
  __shared__ std::uint32_t pivot, held;  // the arrival's pivot column (n: none); new rows so far
  const Layout l = layout_for(max_n, max_count);
  const EliminateJob job = jobs[blockIdx.x];
  const std::uint32_t n = job.n, count = job.count, tid = threadIdx.x;
  const Round r{smem + l.new_rows,  // new row i at rows + i·max_n
                smem + l.transforms,
                smem + l.vector,
                smem + l.transform,
                smem + l.old,  // column c is a pivot of the state
                reinterpret_cast<std::uint16_t*>(smem + l.pivots),
                reinterpret_cast<std::uint16_t*>(smem + l.logs),
                smem + l.row_of,  // new row of arrival j, or kNoRow
                max_n,
                l.transform_width,
                n,
                n + count};
  const LogExp gf{sh_log, sh_exp};
  for (std::uint32_t i = tid; i < 256; i += kThreads) sh_log[i] = c_log_exp.log[i];
  for (std::uint32_t i = tid; i < 1024; i += kThreads) sh_exp[i] = c_log_exp.exp[i];
  for (std::uint32_t c = tid; c < n; c += kThreads) r.old[c] = job.state[c * job.state_pitch + c] != 0;
  if (tid == 0) held = 0;
  __syncthreads();

  for (std::uint32_t j = 0; j < count; ++j) {
    const std::uint32_t h = held;
    reduce_arrival(job, r, gf, j, h, pivot);
    const std::uint32_t p = pivot;
    if (p < n) {  // innovative: a unit at p becomes new row h
      add_new_row(r, gf, h, p);
      if (tid == 0) {
        r.pivots[h] = static_cast<std::uint16_t>(p);
        r.row_of[j] = static_cast<std::uint8_t>(h);
        held = h + 1;
      }
    } else if (tid == 0) {
      r.row_of[j] = kNoRow;
    }
    __syncthreads();
  }
  write_outputs(job, r);
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
