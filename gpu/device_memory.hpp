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

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  // bytes of device memory on the current device; `what` names the use in an out-of-memory message.
  DeviceBuffer(std::size_t bytes, const char* what);
  ~DeviceBuffer() { release(); }
  DeviceBuffer(DeviceBuffer&& other) noexcept { *this = std::move(other); }
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;

  std::uint8_t* get() const { return data_; }
  std::size_t size() const { return size_; }

 private:
  void release() noexcept;
  std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
  int device_ = -1;
};

class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  PinnedBuffer(std::size_t bytes, const char* what);
  ~PinnedBuffer() { release(); }
  PinnedBuffer(PinnedBuffer&& other) noexcept { *this = std::move(other); }
  PinnedBuffer& operator=(PinnedBuffer&& other) noexcept;

  std::uint8_t* get() const { return data_; }
  std::size_t size() const { return size_; }

 private:
  void release() noexcept;
  std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
};

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
