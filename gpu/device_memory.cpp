#include "gpu/device_memory.hpp"

#include "gpu/cuda_check.hpp"

namespace ncast::gpu {

DeviceGuard::DeviceGuard(int device) {
  check(cudaGetDevice(&previous_), "reading the current device");
  if (previous_ != device) check(cudaSetDevice(device), "selecting the device");
}

DeviceGuard::~DeviceGuard() {
  int current = -1;
  if (cudaGetDevice(&current) == cudaSuccess && current != previous_) cudaSetDevice(previous_);
}

std::uint8_t* DeviceMemory::allocate(std::size_t bytes, const char* what) {
  check(cudaGetDevice(&device_), "reading the current device");
  return bytes > 0 ? static_cast<std::uint8_t*>(device_alloc(bytes, what)) : nullptr;
}

void DeviceMemory::deallocate(std::uint8_t* data) const noexcept {
  int current = -1;
  cudaGetDevice(&current);
  if (current != device_) cudaSetDevice(device_);
  cudaFree(data);
  if (current != device_) cudaSetDevice(current);
}

std::uint8_t* PinnedMemory::allocate(std::size_t bytes, const char* what) {
  return bytes > 0 ? static_cast<std::uint8_t*>(pinned_alloc(bytes, what)) : nullptr;
}

void PinnedMemory::deallocate(std::uint8_t* data) noexcept { cudaFreeHost(data); }

Stream::Stream() { check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "creating a stream"); }
Stream::~Stream() { cudaStreamDestroy(stream_); }
void Stream::synchronize(const char* what) const { check(cudaStreamSynchronize(stream_), what); }

Event::Event() { check(cudaEventCreate(&event_), "creating an event"); }
Event::~Event() { cudaEventDestroy(event_); }
void Event::record(cudaStream_t stream) { check(cudaEventRecord(event_, stream), "recording an event"); }
void Event::synchronize() const { check(cudaEventSynchronize(event_), "waiting for an event"); }

float Event::elapsed_ms_since(const Event& start) const {
  float ms = 0;
  check(cudaEventElapsedTime(&ms, start.event_, event_), "reading an event time");
  return ms;
}

}  // namespace ncast::gpu
