#include "coding/simd_level.hpp"

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

namespace ncast::gf {

std::string_view to_string(Level level) {
  switch (level) {
    case Level::scalar: return "scalar";
    case Level::avx2: return "avx2";
    case Level::avx2_gfni: return "avx2-gfni";
    case Level::avx512_gfni: return "avx512-gfni";
  }
  return "unknown";
}

std::optional<Level> parse_level(std::string_view name) {
  for (Level l : {Level::scalar, Level::avx2, Level::avx2_gfni, Level::avx512_gfni})
    if (name == to_string(l)) return l;
  return std::nullopt;
}

bool cpu_supports(Level level) {
  switch (level) {
    case Level::scalar: return true;
    case Level::avx2: return __builtin_cpu_supports("avx2");
    case Level::avx2_gfni: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("gfni");
    case Level::avx512_gfni:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vbmi") &&
             __builtin_cpu_supports("gfni");
  }
  return false;
}

std::span<const Level> supported_levels() {
  static const std::vector<Level> levels = [] {
    std::vector<Level> v;
    for (Level l : {Level::scalar, Level::avx2, Level::avx2_gfni, Level::avx512_gfni})
      if (cpu_supports(l)) v.push_back(l);
    return v;
  }();
  return levels;
}

Level best_level() { return supported_levels().back(); }

namespace {
Level choose_level() {
  const char* forced = std::getenv(std::string(kSimdEnvVar).c_str());
  if (forced == nullptr || *forced == '\0') return best_level();
  auto level = parse_level(forced);
  if (!level)
    throw std::runtime_error(std::string(kSimdEnvVar) + "=" + forced +
                             ": unknown level (use scalar, avx2, avx2-gfni or avx512-gfni)");
  if (!cpu_supports(*level))
    throw std::runtime_error(std::string(kSimdEnvVar) + "=" + forced + ": this CPU does not support it");
  return *level;
}
}  // namespace

Level active_level() {
  static const Level level = choose_level();
  return level;
}

}  // namespace ncast::gf
