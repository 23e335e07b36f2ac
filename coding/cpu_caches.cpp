#include "coding/cpu_caches.hpp"

#include <cpuid.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <fstream>

namespace ncast::gf {
namespace {

// "48K" / "2048K" / "32M" as sysfs writes cache sizes; 0 when unreadable.
std::size_t parse_size(const std::string& text) {
  std::size_t value = 0, i = 0;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) value = value * 10 + (text[i] - '0');
  if (i < text.size() && text[i] == 'K') value <<= 10;
  if (i < text.size() && text[i] == 'M') value <<= 20;
  return value;
}

std::string read_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

CpuCaches from_sysfs() {
  CpuCaches c;
  for (int index = 0; index < 8; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
    const std::string level = read_line(dir + "level"), type = read_line(dir + "type");
    if (level.empty()) break;
    if (type == "Instruction") continue;
    const std::size_t size = parse_size(read_line(dir + "size"));
    if (level == "1") c.l1d = size;
    if (level == "2") c.l2 = size;
    if (level == "3") c.l3 = size;
  }
  return c;
}

CpuCaches detect() {
  CpuCaches c = from_sysfs();
  const auto fallback = [](std::size_t& size, int name, std::size_t otherwise) {
    if (size == 0) size = static_cast<std::size_t>(std::max(0L, sysconf(name)));
    if (size == 0) size = otherwise;
  };
  fallback(c.l1d, _SC_LEVEL1_DCACHE_SIZE, 32 << 10);
  fallback(c.l2, _SC_LEVEL2_CACHE_SIZE, 1 << 20);
  fallback(c.l3, _SC_LEVEL3_CACHE_SIZE, 0);
  return c;
}

std::string brand_string() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(0x80000000, &eax, &ebx, &ecx, &edx) == 0 || eax < 0x80000004) return "unknown";
  std::array<char, 49> brand{};
  for (unsigned leaf = 0; leaf < 3; ++leaf) {
    __get_cpuid(0x80000002 + leaf, &eax, &ebx, &ecx, &edx);
    const std::array<unsigned, 4> regs{eax, ebx, ecx, edx};
    std::memcpy(brand.data() + leaf * 16, regs.data(), 16);
  }
  std::string s(brand.data());
  s.erase(0, s.find_first_not_of(' '));
  s.erase(s.find_last_not_of(' ') + 1);
  return s.empty() ? "unknown" : s;
}

unsigned read_family() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) == 0) return 0;
  const unsigned base = (eax >> 8) & 0xF;
  return base == 0xF ? base + ((eax >> 20) & 0xFF) : base;
}

}  // namespace

const CpuCaches& cpu_caches() {
  static const CpuCaches caches = detect();
  return caches;
}

const std::string& cpu_model() {
  static const std::string model = brand_string();
  return model;
}

unsigned cpu_family() {
  static const unsigned family = read_family();
  return family;
}

}  // namespace ncast::gf
