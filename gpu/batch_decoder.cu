// In-place Gauss–Jordan (the exchange form: no [C | I], no row swaps), one block per generation, the
// matrix in registers: warp w holds rows RPW·w .. RPW·w + RPW-1, lane l words l, l+32, … of each
// (RPW = 16 rows of one word for n ≤ 128, 8 rows of two words up to 256). Pivoting on (q, p), a = C[q][p], exchanges
// unknown p with equation q:
//   row q   ← (1/a) · row q, with column p set to 1/a;
//   row r≠q ← row r with column p cleared, plus C[r][p] · (new row q).
// Columns go in order and the pivot row of column p is the first unused row with a non-zero there
// (none: the matrix is singular). After n pivots the block holds the inverse with rows and columns
// permuted: inverse[p][q'] = R[q][p'] where q, q' are the pivot rows of columns p, p'.
//
// Each step costs one barrier. Before it, every warp posts its candidate for the column (its first
// unused row with a non-zero there) with that row's words; after it, every warp takes the smallest
// candidate and its row from shared memory, scales it by 1/a, and updates its own rows: per row the
// factor comes from one shuffle of the column's bytes, its split product tables (as in kernel_prmt.cu)
// from a shared table of all 256 values, and the update is three PRMT and two LOP3 per word, with
// the pivot row's selectors computed once per step. Then the candidate for the next column.
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

constexpr std::uint32_t kMaxN = 256;
constexpr int kMaxWarps = 32;             // 8 rows each for n = 256: 1024 threads
constexpr std::uint32_t kNone = 0xFFFFu;  // no candidate row
constexpr unsigned kFull = 0xFFFFFFFFu;

struct InverseTable {
  std::uint8_t of[256];  // of[0] = 0
};
constexpr InverseTable make_inverse_table() {
  const detail::LogExpTables t = detail::make_log_exp_tables();
  InverseTable inv{};
  for (int a = 1; a < 256; ++a) inv.of[a] = t.exp[(255 - t.log[a]) % 255];
  return inv;
}
__constant__ InverseTable c_inverse = make_inverse_table();

struct InvertJob {
  const std::uint8_t* coefs;
  std::size_t coef_pitch;
  std::uint8_t* inverse;
  std::size_t inverse_pitch;
  std::uint32_t n;
};

// Split product tables of c, as in kernel_prmt.cu: c·x = A[x & 7] ^ B[(x >> 3) & 7] ^ C[x >> 6].
__device__ inline void split_tables(std::uint32_t c, uint4& ab, std::uint32_t& cc) {
  std::uint32_t p[8];
  p[0] = c;
#pragma unroll
  for (int b = 1; b < 8; ++b) p[b] = xtime(p[b - 1]);
  auto four = [](std::uint32_t x, std::uint32_t y) { return (x << 8) | (y << 16) | ((x ^ y) << 24); };
  const std::uint32_t a = four(p[0], p[1]), b = four(p[3], p[4]);
  ab = make_uint4(a, a ^ (p[2] * 0x01010101u), b, b ^ (p[5] * 0x01010101u));
  cc = four(p[6], p[7]);
}

// PRMT selectors of the bit fields of w, taken from w with its middle bytes swapped so that the
// lookups come out in byte order (kernel_prmt.cu undoes the order at the end instead).
struct Selectors {
  std::uint32_t a, b, c;
};
__device__ inline Selectors selectors(std::uint32_t w) {
  w = __byte_perm(w, 0, 0x3120);
  return {(w & 0x0707u) | ((w >> 12) & 0x7070u), ((w >> 3) & 0x0707u) | ((w >> 15) & 0x7070u),
          ((w >> 6) & 0x0303u) | ((w >> 18) & 0x3030u)};
}
__device__ inline std::uint32_t lookup(const uint4& ab, std::uint32_t cc, const Selectors& s) {
  return __byte_perm(ab.x, ab.y, s.a) ^ __byte_perm(ab.z, ab.w, s.b) ^ __byte_perm(cc, cc, s.c);
}

template <int WPL>
__device__ inline std::uint32_t word_at(const std::uint32_t (&row)[WPL], std::uint32_t x) {
  std::uint32_t v = row[0];
#pragma unroll
  for (int i = 1; i < WPL; ++i)
    if (x == static_cast<std::uint32_t>(i)) v = row[i];
  return v;
}

// Split tables of a value, as one shared-memory record.
struct alignas(16) Tables {
  uint4 ab;
  std::uint32_t c;
};

// Row RPW·warp + i of the job's matrix into rows[i], lane l holding words l, l + 32, …; bit i of the
// result set where that row does not exist.
template <int WPL, int RPW>
__device__ __forceinline__ std::uint32_t load_rows(const InvertJob& job, std::uint32_t (&rows)[RPW][WPL],
                                                   std::uint32_t warp, std::uint32_t lane) {
  std::uint32_t missing = 0;
#pragma unroll
  for (int i = 0; i < RPW; ++i) {
    const std::uint32_t r = warp * RPW + i;
    if (r >= job.n) missing |= 1u << i;
#pragma unroll
    for (int x = 0; x < WPL; ++x) {
      std::uint32_t v = 0;
      const std::uint32_t col = 4 * (lane + 32 * x);
      if (r < job.n)
        for (std::uint32_t b = 0; b < 4 && col + b < job.n; ++b)
          v |= std::uint32_t{job.coefs[r * job.coef_pitch + col + b]} << (8 * b);
      rows[i][x] = v;
    }
  }
  return missing;
}

// Column p of this warp's rows, four to a word (row 4k + b in byte b of word k), as lane
// (p / 4) % 32 holds them.
template <int WPL, int RPW>
__device__ __forceinline__ void gather_column(const std::uint32_t (&rows)[RPW][WPL], std::uint32_t p,
                                              std::uint32_t (&column)[RPW / 4]) {
  const std::uint32_t x = p >> 7, pair = (p & 3) | ((4 + (p & 3)) << 4);
  auto two = [&](int i) { return __byte_perm(word_at<WPL>(rows[i], x), word_at<WPL>(rows[i + 1], x), pair); };
#pragma unroll
  for (int k = 0; k < RPW / 4; ++k) column[k] = __byte_perm(two(4 * k), two(4 * k + 2), 0x5410);
}

// Posts this warp's first unused row with a non-zero in column p (cand, kNone if none) and its words
// (cand_row).
template <int WPL, int RPW>
__device__ __forceinline__ void post_candidate(const std::uint32_t (&rows)[RPW][WPL], std::uint32_t used,
                                               std::uint32_t p, std::uint32_t warp, std::uint32_t lane,
                                               std::uint32_t& cand, std::uint32_t* cand_row) {
  std::uint32_t column[RPW / 4], nonzero = 0;
  gather_column<WPL, RPW>(rows, p, column);
#pragma unroll
  for (int k = 0; k < RPW / 4; ++k) {
    // 0x80 in each non-zero byte, then the four flags gathered into bits 0-3 by one multiply.
    const std::uint32_t w = column[k], high = (w | ((w & 0x7F7F7F7Fu) + 0x7F7F7F7Fu)) & 0x80808080u;
    nonzero |= (((high >> 7) * 0x01020408u) >> 24) << (4 * k);
  }
  nonzero = __shfl_sync(kFull, nonzero, (p >> 2) & 31) & ~used;
  if (lane == 0) cand = nonzero ? warp * RPW + __ffs(nonzero) - 1 : kNone;
  if (nonzero == 0) return;
  const int first = __ffs(nonzero) - 1;
#pragma unroll
  for (int x = 0; x < WPL; ++x) {
    // A tree of selects on the bits of first.
    std::uint32_t a[RPW / 2], b[RPW / 4], c[RPW / 8];
#pragma unroll
    for (int i = 0; i < RPW / 2; ++i) a[i] = first & 1 ? rows[2 * i + 1][x] : rows[2 * i][x];
#pragma unroll
    for (int i = 0; i < RPW / 4; ++i) b[i] = first & 2 ? a[2 * i + 1] : a[2 * i];
#pragma unroll
    for (int i = 0; i < RPW / 8; ++i) c[i] = first & 4 ? b[2 * i + 1] : b[2 * i];
    std::uint32_t v = c[0];
    if constexpr (RPW == 16) v = first & 8 ? c[1] : c[0];
    cand_row[lane + 32 * x] = v;
  }
}

// The new pivot row of column p (1/a times candidate row qrow with column p set to 1), its selectors,
// and the mask that clears column p in the other rows.
template <int WPL>
struct PivotRow {
  std::uint32_t words[WPL], keep[WPL];
  Selectors sel[WPL];
};

// Column p is byte `shift` / 8 of word xp · 32 + lp of a row; scale holds the tables of 1/a.
template <int WPL>
__device__ __forceinline__ void pivot_row(const std::uint32_t* qrow, const Tables& scale, std::uint32_t xp,
                                          std::uint32_t lp, std::uint32_t shift, std::uint32_t lane, PivotRow<WPL>& r) {
#pragma unroll
  for (int x = 0; x < WPL; ++x) {
    const bool at_p = x == static_cast<int>(xp) && lane == lp;
    std::uint32_t w = qrow[lane + 32 * x];
    if (at_p) w = (w & ~(0xFFu << shift)) | (1u << shift);
    r.words[x] = lookup(scale.ab, scale.c, selectors(w));
    r.keep[x] = at_p ? ~(0xFFu << shift) : ~0u;
    r.sel[x] = selectors(r.words[x]);
  }
}

// Every row is updated the same way, so the loop has no branches: rows past n are zero and stay so
// (their factor is 0); row q takes the new pivot row.
template <int WPL, int RPW>
__device__ __forceinline__ void update_rows(std::uint32_t (&rows)[RPW][WPL], const Tables (&factor)[RPW],
                                            const PivotRow<WPL>& pivot, std::uint32_t warp, std::uint32_t q) {
#pragma unroll
  for (int i = 0; i < RPW; ++i) {
    const bool is_q = warp * RPW + i == q;
#pragma unroll
    for (int x = 0; x < WPL; ++x) {
      const std::uint32_t updated = (rows[i][x] & pivot.keep[x]) ^ lookup(factor[i].ab, factor[i].c, pivot.sel[x]);
      rows[i][x] = is_q ? pivot.words[x] : updated;
    }
  }
}

// inverse[step of r][row of step l] = R[r][l]
template <int WPL, int RPW>
__device__ __forceinline__ void store_inverse(const InvertJob& job, const std::uint32_t (&rows)[RPW][WPL],
                                              const std::uint16_t* row_of_step, const std::uint16_t* step_of_row,
                                              std::uint32_t warp, std::uint32_t lane) {
#pragma unroll
  for (int i = 0; i < RPW; ++i) {
    const std::uint32_t r = warp * RPW + i;
    if (r >= job.n) break;
    std::uint8_t* out = job.inverse + std::size_t{step_of_row[r]} * job.inverse_pitch;
#pragma unroll
    for (int x = 0; x < WPL; ++x)
      for (std::uint32_t b = 0, l = 4 * (lane + 32 * x); b < 4 && l < job.n; ++b, ++l)
        out[row_of_step[l]] = static_cast<std::uint8_t>(rows[i][x] >> (8 * b));
  }
}

template <int WPL, int RPW>
__global__ void __launch_bounds__(kMaxN / RPW * 32) invert_kernel(const InvertJob* jobs, int* singular) {
  static_assert((RPW == 8 || RPW == 16) && WPL >= 1 && WPL <= 2);
  __shared__ Tables of[256], inverse_of[256];                  // split tables of c and of 1/c
  __shared__ std::uint32_t cand[2][kMaxWarps];                 // candidate row of each warp, or kNone
  __shared__ std::uint32_t cand_rows[2][kMaxWarps][32 * WPL];  // its words, as the lanes hold them
  __shared__ std::uint16_t row_of_step[kMaxN], step_of_row[kMaxN];

  const InvertJob job = jobs[blockIdx.x];
  const std::uint32_t n = job.n, tid = threadIdx.x, lane = tid % 32, warp = tid / 32, warps = blockDim.x / 32;
  for (std::uint32_t c = tid; c < 256; c += blockDim.x) {
    split_tables(c, of[c].ab, of[c].c);
    split_tables(c_inverse.of[c], inverse_of[c].ab, inverse_of[c].c);
  }
  std::uint32_t rows[RPW][WPL];
  // bit i: row RPW·warp + i was a pivot row or does not exist (the same in every lane)
  std::uint32_t used = load_rows<WPL, RPW>(job, rows, warp, lane);

  post_candidate<WPL, RPW>(rows, used, 0, warp, lane, cand[0][warp], cand_rows[0][warp]);
  __syncthreads();
  for (std::uint32_t p = 0; p < n; ++p) {
    const unsigned slot = p & 1;
    const std::uint32_t xp = p >> 7, lp = (p >> 2) & 31, shift = 8 * (p & 3);
    // First what does not depend on the pivot row, so its latency overlaps the pivot's: column p of
    // this warp's rows (gathered in lane (p / 4) % 32 four rows to a word, shuffled to all) and each
    // row's factor tables.
    std::uint32_t column[RPW / 4];
    gather_column<WPL, RPW>(rows, p, column);
#pragma unroll
    for (int k = 0; k < RPW / 4; ++k) column[k] = __shfl_sync(kFull, column[k], lp);
    Tables factor[RPW];
#pragma unroll
    for (int i = 0; i < RPW; ++i) factor[i] = of[__byte_perm(column[i / 4], 0, 0x4440u | (i & 3))];

    const std::uint32_t q = __reduce_min_sync(kFull, lane < warps ? cand[slot][lane] : kNone);
    if (q == kNone) {  // every warp sees the same candidates, so the whole block leaves here
      if (tid == 0) singular[blockIdx.x] = 1;
      return;
    }
    const std::uint32_t* qrow = cand_rows[slot][q / RPW];
    PivotRow<WPL> pivot;
    pivot_row<WPL>(qrow, inverse_of[reinterpret_cast<const std::uint8_t*>(qrow)[p]], xp, lp, shift, lane, pivot);
    update_rows<WPL, RPW>(rows, factor, pivot, warp, q);
    if (q / RPW == warp) used |= 1u << (q % RPW);
    if (tid == 0) {
      row_of_step[p] = static_cast<std::uint16_t>(q);
      step_of_row[q] = static_cast<std::uint16_t>(p);
    }
    if (p + 1 < n)
      post_candidate<WPL, RPW>(rows, used, p + 1, warp, lane, cand[slot ^ 1][warp], cand_rows[slot ^ 1][warp]);
    __syncthreads();
  }
  store_inverse<WPL, RPW>(job, rows, row_of_step, step_of_row, warp, lane);
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
      throw std::invalid_argument(
          "GPU decode: a job needs an n × n coefficient matrix (n in 1..256) and n × len "
          "payloads and outputs; got " +
          std::to_string(j.coefs.rows) + "x" + std::to_string(j.coefs.cols) + ", " + std::to_string(j.payloads.rows) +
          "x" + std::to_string(j.payloads.cols) + ", " + std::to_string(j.out.rows) + "x" + std::to_string(j.out.cols));
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

  auto* flags = reinterpret_cast<int*>(device_flags_.get());
  for (std::size_t first = 0; first < count; first += 65535) {
    const auto blocks = static_cast<unsigned>(std::min<std::size_t>(65535, count - first));
    const auto* block_jobs = reinterpret_cast<const InvertJob*>(device_jobs_.get()) + first;
    if (max_n > 128) invert_kernel<2, 8><<<blocks, 32 * ((max_n + 7) / 8), 0, stream>>>(block_jobs, flags + first);
    else invert_kernel<1, 16><<<blocks, 32 * ((max_n + 15) / 16), 0, stream>>>(block_jobs, flags + first);
    check_launch("invert");
  }
  // The product follows on the stream at once; a job the inversion found singular is skipped on the
  // device, so its outputs stay as they were.
  batch_.clear();
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t n = jobs[i].coefs.rows;
    batch_.add(
        {ConstDeviceMatrixRef(inverses_.ref().row(i * max_n), n, n, inverses_.pitch()), jobs[i].payloads, jobs[i].out},
        flags + i);
  }
  Kernel kernel = kernel_;
  if (kernel == Kernel::automatic) kernel = fastest_kernel(max_n, max_n, max_len, count);
  batch_.multiply(kernel, false, stream, kernel == Kernel::prmt ? tile_for(count, max_n, max_len) : std::nullopt);
  check(cudaMemcpyAsync(host_flags_.get(), flags, count * sizeof(int), cudaMemcpyDeviceToHost, stream),
        "reading decode results");
  check(cudaStreamSynchronize(stream), "decoding");
  std::vector<bool> ok(count);
  const auto* singular = reinterpret_cast<const int*>(host_flags_.get());
  for (std::size_t i = 0; i < count; ++i) ok[i] = singular[i] == 0;
  return ok;
}

}  // namespace ncast::gpu
