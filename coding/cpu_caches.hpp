#pragma once
// What the CPU reports about itself: its model and the data caches one core sees. The region kernels
// size their column blocks from these, and the benchmarks print them beside every figure.
#include <cstddef>
#include <string>

namespace ncast::gf {

struct CpuCaches {
  std::size_t l1d = 0;  // bytes per core
  std::size_t l2 = 0;   // bytes per core
  std::size_t l3 = 0;   // bytes of the last-level cache shared by this core (0 when there is none)
};

// Read once from Linux's sysfs cache description of CPU 0, else from sysconf; sizes it cannot learn
// are taken as 32 KiB, 1 MiB and 0.
const CpuCaches& cpu_caches();
// The processor's brand string from CPUID ("unknown" when the CPU has none).
const std::string& cpu_model();
// The processor's family as CPUID leaf 1 gives it, the extended family added (AMD Zen 4: 0x19, Zen 5:
// 0x1A): virtual machines often hide the brand string's model name, not this.
unsigned cpu_family();

}  // namespace ncast::gf
