#pragma once
// Host memory for coding buffers, chosen per backend. A CUDA backend wants page-locked memory so that
// its copies run at full PCIe speed and overlap with its kernels; the CPU wants cache-line alignment.
// A backend with needs of its own installs its allocator (the CUDA engine factory does, for
// Backend::cuda, when it hands out a CUDA engine); every other backend gets 64-byte aligned memory.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "coding/backend.hpp"

namespace ncast {

inline constexpr std::size_t kHostAlignment = 64;

struct HostAllocator {
  void* (*allocate)(std::size_t bytes);  // nullptr when the memory cannot be had
  void (*release)(void* p);
  std::string_view kind;  // "aligned", "pinned": for logs and tests
};

// Installs the allocator that buffers for backend come from. Thread-safe; buffers already handed out
// are released by the allocator they came from.
void set_host_allocator(Backend backend, const HostAllocator& allocator);
// The installed allocator for backend, else the 64-byte aligned one.
HostAllocator host_allocator(Backend backend);

struct HostRelease {
  void (*release)(void*) = nullptr;
  void operator()(std::uint8_t* p) const { release(p); }
};

// An owning buffer from a HostAllocator, released by the allocator it came from.
class HostBuffer {
 public:
  HostBuffer() = default;
  std::uint8_t* data() const { return data_.get(); }
  std::size_t size() const { return size_; }
  std::string_view kind() const { return kind_; }

 private:
  friend HostBuffer allocate_host(Backend backend, std::size_t bytes);
  std::unique_ptr<std::uint8_t[], HostRelease> data_;
  std::size_t size_ = 0;
  std::string_view kind_;
};

// bytes of host memory suited to backend; throws std::bad_alloc when it cannot be had.
HostBuffer allocate_host(Backend backend, std::size_t bytes);

}  // namespace ncast
