#pragma once
// Which instruction-set level the CPU region kernels run at. Chosen once per process from CPUID,
// or forced with the environment variable NCAST_SIMD (scalar | avx2 | avx2-gfni | avx512-gfni).
#include <optional>
#include <span>
#include <string_view>

namespace ncast::gf {

enum class Level { scalar, avx2, avx2_gfni, avx512_gfni };

inline constexpr std::string_view kSimdEnvVar = "NCAST_SIMD";

std::string_view to_string(Level level);
std::optional<Level> parse_level(std::string_view name);

bool cpu_supports(Level level);
// Every level this CPU can run, from scalar up.
std::span<const Level> supported_levels();
// The highest level this CPU can run.
Level best_level();
// The level in force: NCAST_SIMD if set, else best_level(). Decided on the first call; throws
// std::runtime_error naming the problem when NCAST_SIMD is unknown or not supported by this CPU.
Level active_level();

}  // namespace ncast::gf
