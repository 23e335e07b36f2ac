// make_engine() of the shared library: the CPU engine from the library itself, the CUDA engine from
// its module (cuda_module.hpp), loaded on first need. Where the module or the CUDA driver is missing,
// backend auto codes on the CPU and backend cuda fails saying why.
#include <dlfcn.h>

#include <memory>
#include <stdexcept>
#include <string>

#include "coding/cpu_engine.hpp"
#include "coding/host_memory.hpp"
#include "coding/rs/library/cuda_module.hpp"

namespace ncast {
namespace {

struct Module {
  rs_library::CudaModuleOpen open = nullptr;
  std::string why;  // why there is no open
};

// The folder this library was loaded from, with its trailing slash: the module lies there, not on
// the loader's search path.
std::string library_folder() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&library_folder), &info) == 0 || info.dli_fname == nullptr) return {};
  const std::string path = info.dli_fname;
  return path.substr(0, path.rfind('/') + 1);
}

// Loaded once per process and never unloaded: its engines may live until exit.
const Module& module() {
  static const Module loaded = [] {
    Module m;
    const std::string path = library_folder() + rs_library::kCudaModuleFile;
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      m.why = std::string("the CUDA module could not be loaded: ") + dlerror();
      return m;
    }
    m.open = reinterpret_cast<rs_library::CudaModuleOpen>(dlsym(handle, rs_library::kCudaModuleEntry));
    if (m.open == nullptr) m.why = path + " has no " + rs_library::kCudaModuleEntry + " (a module of another version)";
    return m;
  }();
  return loaded;
}

std::unique_ptr<Engine> cuda_engine(std::string& why) {
  const Module& m = module();
  if (m.open == nullptr) {
    why = m.why;
    return nullptr;
  }
  rs_library::CudaModuleEngine out;
  m.open(&out);
  if (out.engine == nullptr) {
    why = out.why;
    return nullptr;
  }
  set_host_allocator(Backend::cuda, {out.allocate, out.release, "pinned"});
  return std::unique_ptr<Engine>(out.engine);
}

}  // namespace

std::unique_ptr<Engine> make_engine(Backend backend) {
  if (backend == Backend::cpu) return std::make_unique<CpuEngine>();
  std::string why;
  if (auto engine = cuda_engine(why)) return engine;
  if (backend == Backend::cuda) throw std::runtime_error("backend cuda: " + why);
  return std::make_unique<CpuEngine>();
}

}  // namespace ncast
