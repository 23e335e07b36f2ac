// Gauss–Jordan on [C | I] in shared memory, one block per generation. Rows are not swapped: the row
// chosen as pivot for column p stays where it is, unscaled, and is marked used; every other row r
// gets row_r ^= (C[r][p] / pivot) · row_q, on 4-byte words with the split product tables of the prmt
// kernel, the tables of each row's factor built once per pivot, zero words of row q skipped. A pivot
// row keeps its pivot value (later pivot rows are zero in its column), so its inverse row is that
// value's inverse times its right half, applied on the way out. Three barriers per pivot.
#include "gpu/batch_decoder.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "gpu/cuda_check.hpp"
#include "gpu/kernel_common.cuh"

namespace ncast::gpu {
namespace {

using detail::LogExpTables;
using detail::xtime;

constexpr unsigned kThreads = 1024;  // many warps: one generation alone is latency-bound
constexpr std::uint32_t kMaxN = 256;

__constant__ LogExpTables c_tables = detail::make_log_exp_tables();

struct InvertJob {
  const std::uint8_t* coefs;
  std::size_t coef_pitch;
  std::uint8_t* inverse;
  std::size_t inverse_pitch;
  std::uint32_t n;
};

// Split product tables of c, as in kernel_prmt.cu: c·x = A[x & 7] ^ B[(x >> 3) & 7] ^ C[x >> 6].
struct Tables {
  std::uint32_t a0, a1, b0, b1, c;
};

__device__ inline Tables tables_of(std::uint32_t c) {
  std::uint32_t p[8];
  p[0] = c;
#pragma unroll
  for (int b = 1; b < 8; ++b) p[b] = xtime(p[b - 1]);
  auto four = [](std::uint32_t x, std::uint32_t y) { return (x << 8) | (y << 16) | ((x ^ y) << 24); };
  const std::uint32_t a = four(p[0], p[1]), b = four(p[3], p[4]);
  return {a, a ^ (p[2] * 0x01010101u), b, b ^ (p[5] * 0x01010101u), four(p[6], p[7])};
}

// c·w for the four bytes of w.
__device__ inline std::uint32_t times(const Tables& t, std::uint32_t w) {
  const std::uint32_t sa = (w & 0x0707u) | ((w >> 12) & 0x7070u);
  const std::uint32_t sb = ((w >> 3) & 0x0707u) | ((w >> 15) & 0x7070u);
  const std::uint32_t sc = ((w >> 6) & 0x0303u) | ((w >> 18) & 0x3030u);
  const std::uint32_t r = __byte_perm(t.a0, t.a1, sa) ^ __byte_perm(t.b0, t.b1, sb) ^ __byte_perm(t.c, t.c, sc);
  return __byte_perm(r, 0, 0x3120);  // the selectors' byte order [0 2 1 3] back to [0 1 2 3]
}

__global__ void __launch_bounds__(kThreads) invert_kernel(const InvertJob* jobs, int* singular, std::uint32_t stride) {
  extern __shared__ std::uint32_t rows[];  // row r of [C | I] at rows + r·stride (words)
  __shared__ Tables factor[kMaxN];
  __shared__ std::uint16_t sh_log[256];
  __shared__ std::uint8_t sh_exp[1024];
  __shared__ std::uint8_t used[kMaxN];
  __shared__ std::uint8_t pivot_row[kMaxN];  // the row holding the pivot of column p
  __shared__ std::uint32_t pivot[2];          // double-buffered: the search of p + 1 needs no reset barrier
  const InvertJob job = jobs[blockIdx.x];
  const std::uint32_t n = job.n, words = (2 * n + 3) / 4, tid = threadIdx.x;
  auto byte = [&](std::uint32_t r, std::uint32_t c) -> std::uint8_t& {
    return reinterpret_cast<std::uint8_t*>(rows + r * stride)[c];
  };
  auto mul = [&](std::uint32_t a, std::uint32_t b) -> std::uint32_t { return sh_exp[sh_log[a] + sh_log[b]]; };

  for (std::uint32_t i = tid; i < 256; i += kThreads) sh_log[i] = c_tables.log[i], used[i] = 0;
  for (std::uint32_t i = tid; i < 1024; i += kThreads) sh_exp[i] = c_tables.exp[i];
  for (std::uint32_t i = tid; i < n * words * 4; i += kThreads) {
    const std::uint32_t r = i / (words * 4), c = i % (words * 4);
    byte(r, c) = c < n ? job.coefs[r * job.coef_pitch + c] : (c == n + r ? 1 : 0);
  }
  if (tid == 0) pivot[0] = n;
  // Each thread keeps one word column and walks rows: no division in the elimination loop.
  const std::uint32_t my_word = tid % words, row_step = kThreads / words;
  const std::uint32_t my_row = tid / words;
  const bool eliminates = my_row < row_step;  // the threads left over when words does not divide the block
  __syncthreads();

  for (std::uint32_t p = 0; p < n; ++p) {
    for (std::uint32_t r = tid; r < n; r += kThreads)
      if (!used[r] && byte(r, p) != 0) atomicMin(&pivot[p & 1], r);
    __syncthreads();
    const std::uint32_t q = pivot[p & 1];
    if (q == n) {  // no unused row has column p: singular (the whole block leaves together)
      if (tid == 0) singular[blockIdx.x] = 1;
      return;
    }
    const std::uint32_t inv_a = sh_exp[255 - sh_log[byte(q, p)]];
    for (std::uint32_t r = tid; r < n; r += kThreads) factor[r] = tables_of(r == q ? 0 : mul(byte(r, p), inv_a));
    if (tid == 0) {
      used[q] = 1;
      pivot_row[p] = static_cast<std::uint8_t>(q);
      pivot[(p + 1) & 1] = n;
    }
    __syncthreads();
    // A zero word of row q adds nothing: every word left of column p, and most of the right half
    // while few pivots are done.
    const std::uint32_t from_q = eliminates && 4 * my_word + 4 > p ? rows[q * stride + my_word] : 0;
    if (from_q != 0)
      for (std::uint32_t r = my_row; r < n; r += row_step)
        if (r != q) rows[r * stride + my_word] ^= times(factor[r], from_q);
    __syncthreads();
  }
  for (std::uint32_t i = tid; i < n * n; i += kThreads) {
    const std::uint32_t p = i / n, c = i % n, q = pivot_row[p];
    job.inverse[p * job.inverse_pitch + c] =
        static_cast<std::uint8_t>(mul(sh_exp[255 - sh_log[byte(q, p)]], byte(q, n + c)));
  }
}

// The prmt tile for the payload product: the largest that still gives every SM two blocks, since a
// few generations alone would otherwise leave most of the GPU idle (latency of one generation).
std::optional<PrmtTile> tile_for(std::size_t count, std::size_t n, std::size_t len) {
  int device = 0, sms = 0;
  check(cudaGetDevice(&device), "reading the current device");
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "reading the SM count");
  for (const PrmtTile t : {PrmtTile{32, 4}, PrmtTile{16, 4}, PrmtTile{8, 4}, PrmtTile{8, 2}}) {
    const std::size_t cols = 128 * 4 * static_cast<std::size_t>(t.words);  // bytes per block (kernel_prmt.cu)
    const std::size_t blocks = count * ((n + t.outputs - 1) / t.outputs) * ((len + cols - 1) / cols);
    if (blocks >= 2 * static_cast<std::size_t>(sms)) return t;
  }
  return PrmtTile{4, 2};
}

}  // namespace

BatchDecoder::BatchDecoder(Kernel kernel) : kernel_(kernel) {}
BatchDecoder::~BatchDecoder() = default;

std::vector<bool> BatchDecoder::decode(std::span<const DecodeJob> jobs, cudaStream_t stream) {
  std::uint32_t max_n = 0;
  std::size_t max_len = 0;
  for (const DecodeJob& j : jobs) {
    const std::size_t n = j.coefs.rows;
    if (n < 1 || n > kMaxN || j.coefs.cols != n || j.payloads.rows != n || j.out.rows != n ||
        j.out.cols != j.payloads.cols || j.coefs.data == nullptr || j.coefs.pitch < n)
      throw std::invalid_argument("GPU decode: a job needs an n × n coefficient matrix (n in 1..256) and n × len "
                                  "payloads and outputs; got " +
                                  std::to_string(j.coefs.rows) + "x" + std::to_string(j.coefs.cols) + ", " +
                                  std::to_string(j.payloads.rows) + "x" + std::to_string(j.payloads.cols) + ", " +
                                  std::to_string(j.out.rows) + "x" + std::to_string(j.out.cols));
    require_kernel_layout(j.payloads, "GPU decode payloads");
    require_kernel_layout(j.out, "GPU decode outputs");
    max_n = std::max<std::uint32_t>(max_n, static_cast<std::uint32_t>(n));
    max_len = std::max(max_len, j.out.cols);
  }
  if (jobs.empty()) return {};

  const std::size_t count = jobs.size();
  if (host_jobs_.size() < count * sizeof(InvertJob)) {
    host_jobs_ = PinnedBuffer(count * sizeof(InvertJob), "GPU decode jobs");
    device_jobs_ = DeviceBuffer(count * sizeof(InvertJob), "GPU decode jobs");
    host_flags_ = PinnedBuffer(count * sizeof(int), "GPU decode results");
    device_flags_ = DeviceBuffer(count * sizeof(int), "GPU decode results");
  }
  if (inverses_.rows() < count * max_n || inverses_.cols() < max_n)
    inverses_ = DeviceMatrix(count * max_n, max_n, "GPU decode inverses");
  auto* host = reinterpret_cast<InvertJob*>(host_jobs_.get());
  for (std::size_t i = 0; i < count; ++i)
    host[i] = {jobs[i].coefs.data, jobs[i].coefs.pitch, inverses_.ref().row(i * max_n), inverses_.pitch(),
               static_cast<std::uint32_t>(jobs[i].coefs.rows)};
  check(cudaMemcpyAsync(device_jobs_.get(), host, count * sizeof(InvertJob), cudaMemcpyHostToDevice, stream),
        "copying decode jobs");
  check(cudaMemsetAsync(device_flags_.get(), 0, count * sizeof(int), stream), "clearing decode results");

  const std::uint32_t stride = (2 * max_n + 3) / 4 + 1;  // words; +1 staggers rows over the banks
  const std::size_t shared = std::size_t{max_n} * stride * 4;
  check(cudaFuncSetAttribute(invert_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared)),
        "allowing the inversion kernel its shared memory");
  auto* flags = reinterpret_cast<int*>(device_flags_.get());
  for (std::size_t first = 0; first < count; first += 65535) {
    const auto blocks = static_cast<unsigned>(std::min<std::size_t>(65535, count - first));
    invert_kernel<<<blocks, kThreads, shared, stream>>>(reinterpret_cast<const InvertJob*>(device_jobs_.get()) + first,
                                                        flags + first, stride);
    check_launch("invert");
  }
  check(cudaMemcpyAsync(host_flags_.get(), flags, count * sizeof(int), cudaMemcpyDeviceToHost, stream),
        "reading decode results");
  check(cudaStreamSynchronize(stream), "inverting coefficient matrices");

  // Only full-rank jobs touch their outputs.
  std::vector<bool> ok(count);
  const auto* singular = reinterpret_cast<const int*>(host_flags_.get());
  batch_.clear();
  for (std::size_t i = 0; i < count; ++i) {
    ok[i] = singular[i] == 0;
    if (!ok[i]) continue;
    const std::size_t n = jobs[i].coefs.rows;
    batch_.add({ConstDeviceMatrixRef(inverses_.ref().row(i * max_n), n, n, inverses_.pitch()), jobs[i].payloads,
                jobs[i].out});
  }
  batch_.multiply(kernel_, false, stream, tile_for(count, max_n, max_len));
  check(cudaStreamSynchronize(stream), "multiplying payloads by the inverses");
  return ok;
}

}  // namespace ncast::gpu
