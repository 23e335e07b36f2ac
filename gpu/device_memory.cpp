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

DeviceBuffer::DeviceBuffer(std::size_t bytes, const char* what) : size_(bytes) {
  check(cudaGetDevice(&device_), "reading the current device");
  if (bytes > 0) data_ = static_cast<std::uint8_t*>(device_alloc(bytes, what));
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    device_ = std::exchange(other.device_, -1);
  }
  return *this;
}

void DeviceBuffer::release() noexcept {
  if (data_ == nullptr) return;
  int current = -1;
  cudaGetDevice(&current);
  if (current != device_) cudaSetDevice(device_);
  cudaFree(data_);
  if (current != device_) cudaSetDevice(current);
  data_ = nullptr;
  size_ = 0;
}

PinnedBuffer::PinnedBuffer(std::size_t bytes, const char* what) : size_(bytes) {
  if (bytes > 0) data_ = static_cast<std::uint8_t*>(pinned_alloc(bytes, what));
}

PinnedBuffer& PinnedBuffer::operator=(PinnedBuffer&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void PinnedBuffer::release() noexcept {
  if (data_ != nullptr) cudaFreeHost(data_);
  data_ = nullptr;
  size_ = 0;
}

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
