// Gauss–Jordan on [C | I] in shared memory, one block per generation. Row operations work on 4-byte
// words with the split product tables of the prmt kernel: for pivot p every other row r gets
// row_r ^= C[r][p] · row_p, the tables of each row's factor built once per pivot.
#include "gpu/batch_decoder.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "gpu/cuda_check.hpp"
#include "gpu/kernel_common.cuh"

namespace ncast::gpu {
namespace {

using detail::xtime;

constexpr unsigned kThreads = 512;
constexpr std::uint32_t kMaxN = 256;

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

__device__ inline std::uint8_t inverse_of(std::uint32_t a) {
  // a^254 = a^-1 in GF(2^8): square-and-multiply over the bits of 254.
  auto mul = [](std::uint32_t x, std::uint32_t y) {
    std::uint32_t r = 0;
    for (int b = 0; b < 8; ++b, x = xtime(x))
      if (y & (1u << b)) r ^= x;
    return r;
  };
  std::uint32_t result = 1, base = a;
  for (unsigned e = 254; e != 0; e >>= 1, base = mul(base, base))
    if (e & 1u) result = mul(result, base);
  return static_cast<std::uint8_t>(result);
}

__global__ void __launch_bounds__(kThreads) invert_kernel(const InvertJob* jobs, int* singular, std::uint32_t stride) {
  extern __shared__ std::uint32_t rows[];  // row r of [C | I] at rows + r·stride (words)
  __shared__ Tables factor[kMaxN];
  __shared__ std::uint32_t pivot;
  const InvertJob job = jobs[blockIdx.x];
  const std::uint32_t n = job.n, words = (2 * n + 3) / 4, tid = threadIdx.x;
  auto byte = [&](std::uint32_t r, std::uint32_t c) -> std::uint8_t& {
    return reinterpret_cast<std::uint8_t*>(rows + r * stride)[c];
  };

  for (std::uint32_t i = tid; i < n * words * 4; i += kThreads) {
    const std::uint32_t r = i / (words * 4), c = i % (words * 4);
    byte(r, c) = c < n ? job.coefs[r * job.coef_pitch + c] : (c == n + r ? 1 : 0);
  }
  for (std::uint32_t p = 0; p < n; ++p) {
    if (tid == 0) pivot = n;
    __syncthreads();
    for (std::uint32_t r = p + tid; r < n; r += kThreads)
      if (byte(r, p) != 0) atomicMin(&pivot, r);
    __syncthreads();
    const std::uint32_t q = pivot;
    if (q == n) {  // no row left with column p: singular (the whole block leaves together)
      if (tid == 0) singular[blockIdx.x] = 1;
      return;
    }
    if (q != p)
      for (std::uint32_t w = tid; w < words; w += kThreads) {
        const std::uint32_t t = rows[p * stride + w];
        rows[p * stride + w] = rows[q * stride + w];
        rows[q * stride + w] = t;
      }
    __syncthreads();
    const Tables scale = tables_of(inverse_of(byte(p, p)));
    // Every row's factor before anything changes column p.
    for (std::uint32_t r = tid; r < n; r += kThreads) factor[r] = tables_of(r == p ? 0 : byte(r, p));
    __syncthreads();
    for (std::uint32_t w = tid; w < words; w += kThreads) rows[p * stride + w] = times(scale, rows[p * stride + w]);
    __syncthreads();
    for (std::uint32_t i = tid; i < n * words; i += kThreads) {
      const std::uint32_t r = i / words, w = i % words;
      if (r == p) continue;
      rows[r * stride + w] ^= times(factor[r], rows[p * stride + w]);
    }
    __syncthreads();
  }
  for (std::uint32_t i = tid; i < n * n; i += kThreads) {
    const std::uint32_t r = i / n, c = i % n;
    job.inverse[r * job.inverse_pitch + c] = byte(r, n + c);
  }
}

}  // namespace

BatchDecoder::BatchDecoder(Kernel kernel) : kernel_(kernel) {}
BatchDecoder::~BatchDecoder() = default;

std::vector<bool> BatchDecoder::decode(std::span<const DecodeJob> jobs, cudaStream_t stream) {
  std::uint32_t max_n = 0;
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
  batch_.multiply(kernel_, false, stream);
  check(cudaStreamSynchronize(stream), "multiplying payloads by the inverses");
  return ok;
}

}  // namespace ncast::gpu
