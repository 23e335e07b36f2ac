#include "coding/backend.hpp"

namespace ncast {

std::string_view to_string(Backend backend) {
  switch (backend) {
    case Backend::automatic: return "auto";
    case Backend::cpu: return "cpu";
    case Backend::cuda: return "cuda";
  }
  return "unknown";
}

std::optional<Backend> parse_backend(std::string_view name) {
  for (Backend b : {Backend::automatic, Backend::cpu, Backend::cuda})
    if (name == to_string(b)) return b;
  return std::nullopt;
}

}  // namespace ncast
