// The CUDA module of the installable RS library (coding/rs/library/cuda_module.hpp): asked by the
// library for an engine, it opens the first usable device as ncast's own programs do.
#include <algorithm>
#include <exception>
#include <memory>
#include <string>
#include <string_view>

#include "coding/rs/library/cuda_module.hpp"
#include "gpu/cuda_engine.hpp"
#include "gpu/device_info.hpp"
#include "gpu/pinned_host.hpp"

namespace {

template <std::size_t N>
void copy_text(char (&to)[N], std::string_view text) noexcept {
  const std::size_t n = std::min(text.size(), N - 1);
  text.copy(to, n);
  to[n] = '\0';
}

}  // namespace

extern "C" __attribute__((visibility("default"))) void ncast_rs_cuda_module_open_v1(
    ncast::rs_library::CudaModuleEngine* out) noexcept {
  try {
    std::string why;
    const auto devices = ncast::gpu::usable_devices(&why);
    if (devices.empty()) {
      copy_text(out->why, "no usable CUDA device: " + why);
      return;
    }
    auto engine = std::make_unique<ncast::gpu::CudaEngine>(devices.front().index);
    const ncast::HostAllocator pinned = ncast::gpu::pinned_host_allocator();
    out->allocate = pinned.allocate;
    out->release = pinned.release;
    out->engine = engine.release();
  } catch (const std::exception& e) {
    copy_text(out->why, e.what());
  }
}
