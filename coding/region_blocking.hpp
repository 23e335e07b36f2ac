#pragma once
// How the multi-output kernels split columns so that one chunk of every source stays in cache
// while all outputs are computed from it: sources are read from memory once, whatever m is.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <vector>

#include "coding/cpu_caches.hpp"
#include "coding/gf256.hpp"

namespace ncast::gf::detail {

// Sources are prefetched into L2 this far ahead when they come from L3 or memory: with tens of streams
// the hardware prefetcher falls behind, and L2 (not L1) has enough miss buffers to keep them in flight.
inline constexpr std::size_t kPrefetchDistance = 1024;

// The per-core L2 size the CPU reports, read once: blocking and prefetching are sized from it.
inline std::size_t l2_bytes() {
  static const std::size_t l2 = std::max<std::size_t>(cpu_caches().l2, 256 * 1024);
  return l2;
}

// Prefetching only pays when a call's sources and outputs together outgrow half of L2 (the rest holds
// whatever else the program touches), so that the sources come from further out; where they fit, the
// prefetches take load slots from the kernel for nothing.
inline bool prefetch_pays(std::size_t k, std::size_t m, std::size_t len) { return (k + m) * len > l2_bytes() / 2; }

// A call that outgrows twice L2 with at most this many streams (sources and outputs) is left to the
// hardware prefetchers, which keep up with that many streams from L3: the prefetch instructions only took
// load slots. Measured against not prefetching, interleaved with ISA-L 2.32.1 (ratios' ranges over
// 3-4 runs): on the Zen 4 VM 4+2 at 1 MiB 1.11x against 1.05-1.08x with an L1 prefetch, 8+3
// 1.27-1.30x against 1.16-1.19x, 10+4 1.19-1.22x against 1.15-1.16x with the L2 prefetch, while 12+4
// at 1 MiB gained from it (1.44-1.50x against 1.22-1.33x), as did 16+4 and 32+8; on the Xeon
// (2 MiB L2) 16+4 at 1 MiB 1.17-1.35x against 1.08-1.21x, 17+3 1.14-1.22x against 1.07-1.15x, 4+2
// 1.37-1.57x against 1.05-1.54x, while 32+8 (1.73-2.52x against 1.68-1.86x) and 128+32 (6.4-7.3x
// against 2.3-2.9x) gained from it.
inline constexpr std::size_t kHardwarePrefetchMaxStreamsAmd = 14;
inline constexpr std::size_t kHardwarePrefetchMaxStreamsIntel = 20;

// Whether the AVX-512 kernels prefetch a call's sources into L2: only where prefetching pays at all;
// beyond twice L2 for more streams than the hardware prefetchers keep up with; within twice L2 on Intel
// only (16+4, 17+3 and 32+8 at 64 KiB ran 1.26-1.51x, 1.20-1.31x and 1.55-1.96x ISA-L with the
// prefetch against 1.07-1.36x, 1.00-1.24x and 1.22-1.55x without, where on the Zen 4 VM 6+3 and 8+3
// at 64 KiB ran 1.15-1.24x without against 0.91-1.05x with an L1 prefetch and 17+3 1.20-1.21x
// against 1.01-1.07x with the L2 prefetch).
inline bool prefetch_into_l2(std::size_t k, std::size_t m, std::size_t len) {
  static const bool intel = __builtin_cpu_is("intel");
  if (!prefetch_pays(k, m, len)) return false;
  if ((k + m) * len > 2 * l2_bytes())
    return k + m > (intel ? kHardwarePrefetchMaxStreamsIntel : kHardwarePrefetchMaxStreamsAmd);
  return intel;
}

// Zen 5 (AMD family 0x1A and later), where some choices below differ from those measured on Zen 4 and
// the Xeon.
inline bool zen5() {
  static const bool is = __builtin_cpu_is("amd") && cpu_family() >= 0x1A;
  return is;
}

// Zen 5 is the one CPU here on which prefetching into L1 pays, for calls that read their sources in
// one pass (later output groups find them in L2, and RLNC's 128 x 128 at 4 KiB lost 7 % to it, 128+32
// at 1 MiB 6.44-6.50x ISA-L with the L2 prefetch against 6.05-6.15x): on the EPYC VM, with the general
// kernel, 1 KiB ahead beyond twice L2 took 1 MiB shards from 59 to 78 GB/s (10+4), 40 to 56 (16+4), 43
// to 60 (17+3); 256 bytes ahead beyond L2 but within twice it, for 16 streams or more, 16+4 at 64 KiB
// from 0.92-0.96x ISA-L to 1.23x, while within L2 (12+4 at 64 KiB: 1.25-1.31x without, 1.16-1.18x with)
// and for fewer streams (4+2: 125 -> 91 GB/s) it lost.
inline bool prefetches_into_l1() { return zen5(); }
inline constexpr std::size_t kL1PrefetchMinStreams = 16;
inline constexpr std::size_t kL1PrefetchNear = 256;

// How far ahead of its step a kernel prefetches a source, and into which level.
enum class Fetch { none, into_l2, into_l1 };
struct PrefetchPlan {
  Fetch fetch = Fetch::none;
  std::size_t distance = 0;
};

// The plan for k sources and m outputs computed `group` at a time (one pass over the sources per group).
inline PrefetchPlan prefetch_plan(std::size_t k, std::size_t m, std::size_t len, std::size_t group) {
  if (!prefetches_into_l1() || m > group)
    return prefetch_into_l2(k, m, len) ? PrefetchPlan{Fetch::into_l2, kPrefetchDistance} : PrefetchPlan{};
  const std::size_t bytes = (k + m) * len;
  if (bytes > 2 * l2_bytes()) return {Fetch::into_l1, kPrefetchDistance};
  if (bytes > l2_bytes() && k + m >= kL1PrefetchMinStreams) return {Fetch::into_l1, kL1PrefetchNear};
  return {};
}

// Outputs this large in total are written with streaming stores by the AVX-512 kernels, skipping
// the read-for-ownership of lines that cannot stay in L2 anyway. On Intel's mesh parts an encode of
// shards beyond L2 is bound by traffic to L3, a third of it that read, so half of L2 is the bar. AMD's
// L3 takes L2's victims at less cost than a write to memory, so there only outputs of 8 MiB and more,
// which would not stay in a core's share of L3 either, are streamed (and the AVX2 kernels never stream:
// on Zen the writes to memory cost more than the reads they save).
inline std::size_t streaming_min_bytes() {
  static const std::size_t bytes = __builtin_cpu_is("intel") ? l2_bytes() / 2 : std::size_t{8} << 20;
  return bytes;
}

// On Zen 5 the kernels that keep their matrix in registers, whose 1 MiB shards run at the pace of L3
// and memory, stream from L2's size on: 4+2 70 -> 81 GB/s, 6+3 66 -> 75, 8+3 58 -> 80 (ISA-L 2.32.1:
// 63, 56, 59), where the general and block kernels lost to it (10+4 65 -> 45, 12+4 60 -> 41). On the
// Xeon a call that streams does better with the general kernel (1 MiB shards, ratio to ISA-L over 3
// runs: 8+3 1.21-1.24 against 1.15-1.18 resident, 6+3 1.24-1.27 against 1.20-1.25), so there streaming
// calls are not resident ones.
inline bool resident_kernels_stream() { return zen5(); }

// Whether dot_multi should write its m outputs with streaming stores of `align`-byte vectors: they are
// not accumulated into, aligned, and min_bytes or more in total. The price is that they leave the caches.
inline bool streaming_pays(std::uint8_t* const* dsts, std::size_t m, std::size_t len, bool accumulate,
                           std::size_t align, std::size_t min_bytes) {
  if (accumulate || m * len < min_bytes) return false;
  for (std::size_t i = 0; i < m; ++i)
    if (reinterpret_cast<std::uintptr_t>(dsts[i]) % align != 0) return false;
  return true;
}

// Bytes per column chunk for k sources: half of L2 for the k source chunks, leaving room for the
// outputs and prefetched lines; a multiple of 64, at least 1 KiB, at most 64 KiB.
inline std::size_t column_chunk(std::size_t k) {
  const std::size_t per_source = l2_bytes() / 2 / std::max<std::size_t>(k, 1);
  return std::clamp<std::size_t>(per_source & ~std::size_t{63}, 1024, 64 * 1024);
}

// Settles the shapes with nothing to multiply (no outputs, no columns, or no sources, where the outputs
// become zero unless accumulating); returns true when the call is complete.
inline bool trivial_dot_multi(std::uint8_t* const* dsts, std::size_t m, std::size_t k, std::size_t len,
                              bool accumulate) {
  if (m == 0 || len == 0) return true;
  if (k != 0) return false;
  if (!accumulate)
    for (std::size_t i = 0; i < m; ++i) std::fill_n(dsts[i], len, std::uint8_t{0});
  return true;
}

// The outputs split into as few groups of at most `group` as possible, all of nearly one size (8 outputs
// in groups of at most 6 run as 4 + 4, not 6 + 2): a group kernel's cost per source is mostly fixed.
constexpr std::size_t balanced_group(std::size_t m, std::size_t group) {
  const std::size_t groups = (m + group - 1) / group;
  return groups == 0 ? group : (m + groups - 1) / groups;
}

// The columns [pos, end) of g outputs byte by byte: the tail shorter than a vector of kernels without
// masked loads. coefs has row stride k.
inline void dot_tail(std::uint8_t* const* dsts, std::size_t g, const std::uint8_t* const* srcs, std::size_t k,
                     const std::uint8_t* coefs, std::size_t pos, std::size_t end, bool accumulate) {
  for (; pos < end; ++pos)
    for (std::size_t i = 0; i < g; ++i) {
      std::uint8_t acc = accumulate ? dsts[i][pos] : 0;
      for (std::size_t s = 0; s < k; ++s) acc ^= gf::mul(coefs[i * k + s], srcs[s][pos]);
      dsts[i][pos] = acc;
    }
}

// Memory on cache-line boundaries: a group kernel reads all its sources' constants at every step, and
// a matrix whose constants straddle one line more than they fill costs a line more in L1 per call, on
// whichever side of an alternation the heap happened to misalign.
template <class T>
struct LineAllocator {
  using value_type = T;
  static constexpr std::align_val_t kLine{64};
  // T may itself be a pointer (the AVX2 kernels keep table addresses): n of them are what is asked for.
  T* allocate(std::size_t n) {
    return static_cast<T*>(::operator new(n * sizeof(T), kLine));  // NOLINT(bugprone-sizeof-expression)
  }
  void deallocate(T* p, std::size_t /*n*/) { ::operator delete(p, kLine); }
  bool operator==(const LineAllocator& /*other*/) const { return true; }
};

template <class T>
using LineVector = std::vector<T, LineAllocator<T>>;

// One constant per coefficient (make(c)), laid out group by group of balanced_group(m, group) outputs and
// source-major inside a group: the order in which a group kernel reads them. A make that can expand a
// whole group of 8 at once (make.group_of_8(block, rows, k), rows: 8 rows of k) is given those groups.
template <class T, class Make>
void expand_by_group(LineVector<T>& out, const std::uint8_t* coefs, std::size_t m, std::size_t k, std::size_t group,
                     Make make) {
  group = balanced_group(m, group);
  out.resize(m * k);
  for (std::size_t g0 = 0; g0 < m; g0 += group) {
    const std::size_t gs = std::min(group, m - g0);
    T* block = out.data() + g0 * k;
    if constexpr (requires { make.group_of_8(block, coefs, k); })
      if (gs == 8) {
        make.group_of_8(block, coefs + g0 * k, k);
        continue;
      }
    for (std::size_t s = 0; s < k; ++s)
      for (std::size_t g = 0; g < gs; ++g) block[s * gs + g] = make(coefs[(g0 + g) * k + s]);
  }
}

// The expanded constants of the last few matrices one thread multiplied by at one level: codecs call
// again and again with the same matrices (an RS code's parity rows, the cached decode matrix of a lost
// disk, several codes served by one thread, encodes between reconstructions), and expanding one costs a
// store of a whole vector per coefficient, as much as the multiply itself on short regions.
inline constexpr std::size_t kExpansionCacheEntries = 4;

// What tells the cached matrices apart at a glance: shape and first 8 coefficients, all entries' in one
// cache line. A lookup passes over the entries that are not its matrix without reading their coefficients
// or calling memcmp: where an encode and a reconstruction of one shape alternate, whichever matrix came
// second was compared with the other's (a memcmp call, another line) on every call, a cost the other
// did not have.
struct ExpansionKey {
  std::uint32_t m = 0, k = 0;  // a call with 2^32 sources would need 32 GiB for their pointers
  std::uint64_t head = 0;
};

inline std::uint64_t coef_head(const std::uint8_t* coefs, std::size_t count) {
  std::uint64_t head = 0;
  std::memcpy(&head, coefs, std::min<std::size_t>(count, sizeof head));
  return head;
}

template <class T>
struct ExpansionCache {
  struct Entry {
    std::vector<std::uint8_t> coefs;
    LineVector<T> out;
    std::uint64_t last_use = 0;
  };
  alignas(64) std::array<ExpansionKey, kExpansionCacheEntries> keys;
  std::array<Entry, kExpansionCacheEntries> entries;
  std::uint64_t uses = 0;
};

// expand_by_group's output for coefs, from the cache when it holds the matrix, else expanded into the
// entry used longest ago.
template <class T, class Make>
const T* expand_cached(ExpansionCache<T>& cache, const std::uint8_t* coefs, std::size_t m, std::size_t k,
                       std::size_t group, Make make) {
  const std::size_t count = m * k;
  const ExpansionKey key{static_cast<std::uint32_t>(m), static_cast<std::uint32_t>(k), coef_head(coefs, count)};
  for (std::size_t i = 0; i < kExpansionCacheEntries; ++i) {
    const ExpansionKey& have = cache.keys[i];
    auto& e = cache.entries[i];
    if (have.m == key.m && have.k == key.k && have.head == key.head &&
        (count <= sizeof key.head || std::equal(e.coefs.begin(), e.coefs.end(), coefs))) {
      e.last_use = ++cache.uses;
      return e.out.data();
    }
  }
  std::size_t oldest = 0;
  for (std::size_t i = 1; i < kExpansionCacheEntries; ++i)
    if (cache.entries[i].last_use < cache.entries[oldest].last_use) oldest = i;
  auto& e = cache.entries[oldest];
  // An entry that must grow grows every entry to this matrix: once a thread has seen its largest matrix
  // no call allocates, whichever entry it evicts (a rank tracker's shapes change call by call, and on a
  // CPU with AVX2 alone one entry a pass grew: RankTracker.AddingVectorsAllocatesNothing).
  if (e.out.capacity() < count || e.coefs.capacity() < count)
    for (auto& other : cache.entries) {
      other.coefs.reserve(count);
      other.out.reserve(count);
    }
  e.coefs.assign(coefs, coefs + count);
  e.last_use = ++cache.uses;
  expand_by_group(e.out, coefs, m, k, group, make);
  cache.keys[oldest] = key;
  return e.out.data();
}

// Calls fn(first_output, outputs, column_offset, columns) chunk by chunk, and within a chunk for each
// group of balanced_group(m, group) outputs, so that every group after the first finds the chunk in cache.
template <class Fn>
void for_each_block(std::size_t m, std::size_t k, std::size_t len, std::size_t group, Fn&& fn) {
  group = balanced_group(m, group);
  const std::size_t chunk = column_chunk(k);
  for (std::size_t off = 0; off < len; off += chunk) {
    const std::size_t n = std::min(chunk, len - off);
    for (std::size_t g0 = 0; g0 < m; g0 += group) fn(g0, std::min(group, m - g0), off, n);
  }
}

}  // namespace ncast::gf::detail
