#pragma once
// Which engine does the coding work: the CPU kernels, or the CUDA backend when one is built and usable.
#include <optional>
#include <string_view>

namespace ncast {

enum class Backend { automatic, cpu, cuda };

std::string_view to_string(Backend backend);
// Accepts "auto", "cpu" and "cuda".
std::optional<Backend> parse_backend(std::string_view name);

}  // namespace ncast
