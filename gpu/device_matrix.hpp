#pragma once
// Byte matrices in device memory: rows of `cols` bytes, `pitch` bytes apart. The GF(2^8) kernels
// read and write whole 16-byte words, so a matrix they touch starts 16-byte aligned and has a pitch
// that is a multiple of 16 (DeviceMatrix always does); they never write a byte past `cols` in a row.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "gpu/device_memory.hpp"

namespace ncast::gpu {

struct DeviceMatrixRef {
  std::uint8_t* data = nullptr;
  std::size_t rows = 0, cols = 0, pitch = 0;
  std::uint8_t* row(std::size_t i) const { return data + i * pitch; }
};

struct ConstDeviceMatrixRef {
  const std::uint8_t* data = nullptr;
  std::size_t rows = 0, cols = 0, pitch = 0;
  ConstDeviceMatrixRef() = default;
  ConstDeviceMatrixRef(const std::uint8_t* d, std::size_t r, std::size_t c, std::size_t p)
      : data(d), rows(r), cols(c), pitch(p) {}
  ConstDeviceMatrixRef(const DeviceMatrixRef& m) : data(m.data), rows(m.rows), cols(m.cols), pitch(m.pitch) {}
  const std::uint8_t* row(std::size_t i) const { return data + i * pitch; }
};

// Throws std::invalid_argument naming `what` unless m starts 16-byte aligned with a pitch that is a
// multiple of 16 and at least cols.
void require_kernel_layout(const ConstDeviceMatrixRef& m, const char* what);

// An owned device matrix on the current device; the pitch is cols rounded up to 128 bytes.
class DeviceMatrix {
 public:
  DeviceMatrix() = default;
  DeviceMatrix(std::size_t rows, std::size_t cols, const char* what = "a device matrix");

  std::size_t rows() const { return rows_; }
  std::size_t cols() const { return cols_; }
  std::size_t pitch() const { return pitch_; }
  DeviceMatrixRef ref() { return {buffer_.get(), rows_, cols_, pitch_}; }
  ConstDeviceMatrixRef cref() const { return {buffer_.get(), rows_, cols_, pitch_}; }

  // Copies host row i (cols bytes at host_rows[i]) into row i, for every row, on `stream`. The host
  // rows must stay valid until the stream has done the copy.
  void upload(const std::uint8_t* const* host_rows, cudaStream_t stream = nullptr);
  void download(std::uint8_t* const* host_rows, cudaStream_t stream = nullptr) const;

 private:
  DeviceBuffer buffer_;
  std::size_t rows_ = 0, cols_ = 0, pitch_ = 0;
};

// Copies rows host_rows[0..rows) (width bytes from column col0) into dst rows, one 2D copy when the
// host rows are evenly spaced, else one copy per row.
void copy_rows_to_device(DeviceMatrixRef dst, const std::uint8_t* const* host_rows, std::size_t rows, std::size_t col0,
                         std::size_t width, cudaStream_t stream);
void copy_rows_to_host(std::uint8_t* const* host_rows, ConstDeviceMatrixRef src, std::size_t rows, std::size_t col0,
                       std::size_t width, cudaStream_t stream);

}  // namespace ncast::gpu
