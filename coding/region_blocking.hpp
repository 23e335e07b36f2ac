#pragma once
// How the multi-output kernels split columns so that one chunk of every source stays in cache
// while all outputs are computed from it: sources are read from memory once, whatever m is.
#include <algorithm>
#include <cstddef>

namespace ncast::gf::detail {

// Half of a 1 MiB L2 for the k source chunks, leaving room for outputs and prefetched lines.
inline constexpr std::size_t kBlockBudgetBytes = 512 * 1024;

// Sources are prefetched into L2 this far ahead when they come from memory: with tens of streams the
// hardware prefetcher falls behind, and L2 (not L1) has enough miss buffers to keep them in flight.
inline constexpr std::size_t kPrefetchDistance = 1024;
// Below this many bytes per region the sources are taken to be in cache already and not prefetched.
inline constexpr std::size_t kPrefetchMinBytes = 64 * 1024;

// Bytes per column chunk for k sources: a multiple of 64, at least 1 KiB, at most 64 KiB.
constexpr std::size_t column_chunk(std::size_t k) {
  const std::size_t per_source = kBlockBudgetBytes / std::max<std::size_t>(k, 1);
  return std::clamp<std::size_t>(per_source & ~std::size_t{63}, 1024, 64 * 1024);
}

}  // namespace ncast::gf::detail
