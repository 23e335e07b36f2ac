#include "coding/host_memory.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <mutex>
#include <new>

namespace ncast {
namespace {

void* aligned_allocate(std::size_t bytes) {
  const std::size_t rounded = (std::max<std::size_t>(bytes, 1) + kHostAlignment - 1) / kHostAlignment * kHostAlignment;
  return std::aligned_alloc(kHostAlignment, rounded);
}

void aligned_release(void* p) { std::free(p); }

constexpr HostAllocator kAligned{aligned_allocate, aligned_release, "aligned"};

struct Registry {
  std::mutex mutex;
  std::array<HostAllocator, 3> by_backend{kAligned, kAligned, kAligned};
};

Registry& registry() {
  static Registry r;
  return r;
}

std::size_t slot(Backend backend) { return static_cast<std::size_t>(backend); }

}  // namespace

void set_host_allocator(Backend backend, const HostAllocator& allocator) {
  auto& r = registry();
  std::lock_guard lock(r.mutex);
  r.by_backend.at(slot(backend)) = allocator;
}

HostAllocator host_allocator(Backend backend) {
  auto& r = registry();
  std::lock_guard lock(r.mutex);
  return r.by_backend.at(slot(backend));
}

HostBuffer allocate_host(Backend backend, std::size_t bytes) {
  const HostAllocator a = host_allocator(backend);
  void* p = a.allocate(bytes);
  if (p == nullptr) throw std::bad_alloc();
  HostBuffer b;
  b.data_ = std::unique_ptr<std::uint8_t[], HostRelease>(static_cast<std::uint8_t*>(p), {a.release});
  b.size_ = bytes;
  b.kind_ = a.kind;
  return b;
}

}  // namespace ncast
