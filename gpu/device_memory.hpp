#pragma once
// Owners of CUDA resources: device and page-locked host buffers, streams, events, and the guard that
// makes one device current for a scope. Destructors never throw; they release on the device that
// allocated.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <utility>

namespace ncast::gpu {

// Makes `device` current for the calling thread until the guard goes out of scope.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
};

// The shell of an owned allocation: `size()` bytes at `get()`, movable, released on destruction
// through Memory, which allocates, deallocates, and keeps what deallocating needs to know.
template <class Memory>
class Buffer : private Memory {
 public:
  Buffer() = default;
  // `what` names the use in an out-of-memory message.
  Buffer(std::size_t bytes, const char* what) : data_(Memory::allocate(bytes, what)), size_(bytes) {}
  ~Buffer() { release(); }
  Buffer(Buffer&& other) noexcept { *this = std::move(other); }
  Buffer& operator=(Buffer&& other) noexcept {
    if (this != &other) {
      release();
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
      static_cast<Memory&>(*this) = std::exchange(static_cast<Memory&>(other), Memory{});
    }
    return *this;
  }

  std::uint8_t* get() const { return data_; }
  std::size_t size() const { return size_; }

 private:
  void release() noexcept {
    if (data_ != nullptr) Memory::deallocate(data_);
    data_ = nullptr;
    size_ = 0;
  }
  std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
};

// Device memory on the device current at allocation, freed on that device whichever is current then.
class DeviceMemory {
 protected:
  std::uint8_t* allocate(std::size_t bytes, const char* what);
  void deallocate(std::uint8_t* data) const noexcept;

 private:
  int device_ = -1;
};

// Page-locked host memory.
class PinnedMemory {
 protected:
  static std::uint8_t* allocate(std::size_t bytes, const char* what);
  static void deallocate(std::uint8_t* data) noexcept;
};

using DeviceBuffer = Buffer<DeviceMemory>;
using PinnedBuffer = Buffer<PinnedMemory>;

// A non-blocking stream on the current device.
class Stream {
 public:
  Stream();
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return stream_; }
  void synchronize(const char* what) const;

 private:
  cudaStream_t stream_ = nullptr;
};

class Event {
 public:
  Event();
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return event_; }
  void record(cudaStream_t stream);
  // Milliseconds from start to this event; both must have completed or been waited for.
  float elapsed_ms_since(const Event& start) const;
  void synchronize() const;

 private:
  cudaEvent_t event_ = nullptr;
};

}  // namespace ncast::gpu
