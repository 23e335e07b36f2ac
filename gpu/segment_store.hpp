#pragma once
// Segments (RLNC generations) kept resident in device memory, so that each is uploaded once and then
// coded from again and again. Each device has a byte budget; a segment that does not fit pushes out
// the least recently used segments of its device. New segments go to the device with the most
// budget free, which spreads them over every device the store uses.
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <span>
#include <unordered_map>
#include <vector>

#include "coding/rlnc/coefficients.hpp"
#include "coding/rlnc/generation.hpp"
#include "gpu/device_matrix.hpp"

namespace ncast::gpu {

struct SegmentKey {
  std::uint64_t stream = 0;
  std::uint32_t segment = 0;
  bool operator==(const SegmentKey&) const = default;
};

struct SegmentKeyHash {
  std::size_t operator()(const SegmentKey& k) const {
    return std::hash<std::uint64_t>()(k.stream * 0x9E3779B97F4A7C15ull ^ k.segment);
  }
};

// A resident segment: its n source symbols as an n × symbol_size device matrix, and the seed context
// its coded symbols draw their coefficients from.
struct ResidentSegment {
  SegmentKey key;
  int device = 0;
  rlnc::GenerationLayout layout;
  rlnc::SeedContext seeds;
  DeviceMatrix symbols;
};

class SegmentStore {
 public:
  // budget_per_device bytes of device memory on each of `devices` (default: every usable device).
  // Throws std::invalid_argument for a zero budget, CudaError when a device cannot be used.
  explicit SegmentStore(std::size_t budget_per_device, std::vector<int> devices = {});

  // Uploads the segment (block: layout.block_bytes() bytes, symbol i at i·symbol_size) and keeps it,
  // replacing a segment of the same key. Throws std::invalid_argument when the block has the wrong
  // size or one segment is larger than a device's budget.
  std::shared_ptr<const ResidentSegment> put(const SegmentKey& key, const rlnc::GenerationLayout& layout,
                                             std::span<const std::uint8_t> block, const rlnc::SeedContext& seeds);
  // The segment, now the most recently used; null when it is not resident. A segment in use stays
  // valid after eviction until its last holder lets go.
  std::shared_ptr<const ResidentSegment> find(const SegmentKey& key);
  bool erase(const SegmentKey& key);

  std::size_t size() const;
  std::size_t budget_per_device() const { return budget_; }
  const std::vector<int>& devices() const { return devices_; }
  std::size_t bytes_resident(int device) const;
  std::uint64_t evictions() const;

 private:
  struct Entry {
    std::shared_ptr<const ResidentSegment> segment;
    std::list<SegmentKey>::iterator lru;  // position in lru_ (front: most recent)
    std::size_t bytes;
  };
  void drop(std::unordered_map<SegmentKey, Entry, SegmentKeyHash>::iterator it);  // mutex_ held

  std::size_t budget_;
  std::vector<int> devices_;
  mutable std::mutex mutex_;
  std::unordered_map<SegmentKey, Entry, SegmentKeyHash> entries_;
  std::list<SegmentKey> lru_;
  std::unordered_map<int, std::size_t> used_;
  std::uint64_t evictions_ = 0;
};

}  // namespace ncast::gpu
