#include "gpu/device_matrix.hpp"

#include <cstdint>
#include <stdexcept>
#include <string>

#include "gpu/cuda_check.hpp"

namespace ncast::gpu {
namespace {

// The common distance between consecutive rows, or 0 when they are not evenly spaced at a
// distance that a 2D copy accepts (positive, at least the width).
std::size_t even_spacing(const std::uint8_t* const* rows, std::size_t count, std::size_t width) {
  if (count < 2) return 0;
  const auto base = reinterpret_cast<std::uintptr_t>(rows[0]);
  const auto next = reinterpret_cast<std::uintptr_t>(rows[1]);
  if (next <= base || next - base < width) return 0;
  const std::uintptr_t step = next - base;
  for (std::size_t i = 2; i < count; ++i)
    if (reinterpret_cast<std::uintptr_t>(rows[i]) != base + i * step) return 0;
  return step;
}

}  // namespace

void require_kernel_layout(const ConstDeviceMatrixRef& m, const char* what) {
  if (m.rows == 0 || m.cols == 0) return;
  if (m.data == nullptr) throw std::invalid_argument(std::string(what) + ": null device pointer");
  if (reinterpret_cast<std::uintptr_t>(m.data) % 16 != 0 || m.pitch % 16 != 0 || m.pitch < m.cols)
    throw std::invalid_argument(std::string(what) +
                                ": device matrix must start 16-byte aligned with a pitch that is a multiple of 16 "
                                "and at least its width (pitch " +
                                std::to_string(m.pitch) + ", width " + std::to_string(m.cols) + ")");
}

DeviceMatrix::DeviceMatrix(std::size_t rows, std::size_t cols, const char* what)
    : buffer_(rows * ((cols + 127) / 128 * 128), what), rows_(rows), cols_(cols), pitch_((cols + 127) / 128 * 128) {}

void DeviceMatrix::upload(const std::uint8_t* const* host_rows, cudaStream_t stream) {
  copy_rows_to_device(ref(), host_rows, rows_, 0, cols_, stream);
}

void DeviceMatrix::download(std::uint8_t* const* host_rows, cudaStream_t stream) const {
  copy_rows_to_host(host_rows, cref(), rows_, 0, cols_, stream);
}

void copy_rows_to_device(DeviceMatrixRef dst, const std::uint8_t* const* host_rows, std::size_t rows, std::size_t col0,
                         std::size_t width, cudaStream_t stream) {
  if (rows == 0 || width == 0) return;
  if (const std::size_t step = even_spacing(host_rows, rows, width)) {
    check(
        cudaMemcpy2DAsync(dst.data, dst.pitch, host_rows[0] + col0, step, width, rows, cudaMemcpyHostToDevice, stream),
        "copying rows to the device");
    return;
  }
  for (std::size_t i = 0; i < rows; ++i)
    check(cudaMemcpyAsync(dst.row(i), host_rows[i] + col0, width, cudaMemcpyHostToDevice, stream),
          "copying a row to the device");
}

void copy_rows_to_host(std::uint8_t* const* host_rows, ConstDeviceMatrixRef src, std::size_t rows, std::size_t col0,
                       std::size_t width, cudaStream_t stream) {
  if (rows == 0 || width == 0) return;
  if (const std::size_t step = even_spacing(host_rows, rows, width)) {
    check(
        cudaMemcpy2DAsync(host_rows[0] + col0, step, src.data, src.pitch, width, rows, cudaMemcpyDeviceToHost, stream),
        "copying rows to the host");
    return;
  }
  for (std::size_t i = 0; i < rows; ++i)
    check(cudaMemcpyAsync(host_rows[i] + col0, src.row(i), width, cudaMemcpyDeviceToHost, stream),
          "copying a row to the host");
}

}  // namespace ncast::gpu
