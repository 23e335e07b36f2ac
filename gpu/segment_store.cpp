#include "gpu/segment_store.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "gpu/cuda_check.hpp"
#include "gpu/device_info.hpp"
#include "gpu/device_memory.hpp"

namespace ncast::gpu {
namespace {

std::size_t device_bytes(const rlnc::GenerationLayout& layout) {
  return layout.n() * ((layout.symbol_size() + 127) / 128 * 128);  // DeviceMatrix's pitch
}

}  // namespace

SegmentStore::SegmentStore(std::size_t budget_per_device, std::vector<int> devices)
    : budget_(budget_per_device), devices_(std::move(devices)) {
  if (budget_ == 0) throw std::invalid_argument("segment store: the budget must be positive");
  std::string why;
  std::vector<int> usable;
  for (const auto& d : usable_devices(&why)) usable.push_back(d.index);
  if (usable.empty()) throw CudaError(cudaErrorNoDevice, "segment store: no usable CUDA device: " + why);
  if (devices_.empty()) devices_ = usable;
  for (int d : devices_)
    if (std::find(usable.begin(), usable.end(), d) == usable.end())
      throw CudaError(cudaErrorInvalidDevice, "segment store: CUDA device " + std::to_string(d) + " is not usable");
  for (int d : devices_) used_[d] = 0;
}

std::shared_ptr<const ResidentSegment> SegmentStore::put(const SegmentKey& key, const rlnc::GenerationLayout& layout,
                                                         std::span<const std::uint8_t> block,
                                                         const rlnc::SeedContext& seeds) {
  if (block.size() != layout.block_bytes())
    throw std::invalid_argument("segment store: block is " + std::to_string(block.size()) +
                                " bytes, the layout needs " + std::to_string(layout.block_bytes()));
  const std::size_t bytes = device_bytes(layout);
  if (bytes > budget_)
    throw std::invalid_argument("segment store: a segment of " + std::to_string(bytes) +
                                " device bytes exceeds the budget of " + std::to_string(budget_) + " per device");
  std::lock_guard lock(mutex_);
  if (auto it = entries_.find(key); it != entries_.end()) drop(it);
  int device = devices_.front();
  for (int d : devices_)
    if (used_[d] < used_[device]) device = d;
  // Least recently used segments of this device go until the new one fits.
  std::vector<SegmentKey> victims;
  std::size_t freed = 0;
  for (auto it = lru_.rbegin(); used_[device] - freed + bytes > budget_ && it != lru_.rend(); ++it) {
    const Entry& e = entries_.at(*it);
    if (e.segment->device != device) continue;
    victims.push_back(*it);
    freed += e.bytes;
  }
  for (const SegmentKey& v : victims) {
    drop(entries_.find(v));
    ++evictions_;
  }

  DeviceGuard guard(device);
  auto segment = std::make_shared<ResidentSegment>(ResidentSegment{
      key, device, layout, seeds, DeviceMatrix(layout.n(), layout.symbol_size(), "a resident segment")});
  std::vector<const std::uint8_t*> rows;
  for (std::size_t i = 0; i < layout.n(); ++i) rows.push_back(block.data() + i * layout.symbol_size());
  segment->symbols.upload(rows.data());
  check(cudaStreamSynchronize(nullptr), "uploading a segment");

  lru_.push_front(key);
  entries_[key] = Entry{segment, lru_.begin(), bytes};
  used_[device] += bytes;
  return segment;
}

std::shared_ptr<const ResidentSegment> SegmentStore::find(const SegmentKey& key) {
  std::lock_guard lock(mutex_);
  const auto it = entries_.find(key);
  if (it == entries_.end()) return nullptr;
  lru_.splice(lru_.begin(), lru_, it->second.lru);
  return it->second.segment;
}

bool SegmentStore::erase(const SegmentKey& key) {
  std::lock_guard lock(mutex_);
  const auto it = entries_.find(key);
  if (it == entries_.end()) return false;
  drop(it);
  return true;
}

void SegmentStore::drop(std::unordered_map<SegmentKey, Entry, SegmentKeyHash>::iterator it) {
  used_[it->second.segment->device] -= it->second.bytes;
  lru_.erase(it->second.lru);
  entries_.erase(it);
}

std::size_t SegmentStore::size() const {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

std::size_t SegmentStore::bytes_resident(int device) const {
  std::lock_guard lock(mutex_);
  const auto it = used_.find(device);
  return it == used_.end() ? 0 : it->second;
}

std::uint64_t SegmentStore::evictions() const {
  std::lock_guard lock(mutex_);
  return evictions_;
}

}  // namespace ncast::gpu
