// make_chunk_coder() gives the bytes of the reference coder (the CPU engine over host memory) for
// the best engine of the machine: on a GPU host in a CUDA build that is the resident GPU coder, here
// with a device budget of two segments so that re-uploading evicted segments is exercised too.
#include "server/chunk_coder.hpp"

#include <gtest/gtest.h>

#include <random>

#include "coding/cpu_engine.hpp"
#include "coding/host_memory.hpp"

namespace ncast::server {
namespace {

TEST(ChunkCoder, BestCoderMatchesTheEngineReference) {
  auto engine = make_engine(Backend::automatic);
  const std::size_t n = 100, L = 1000;
  auto best = make_chunk_coder(*engine, 2 * n * L);
  CpuEngine cpu;
  auto reference = make_engine_chunk_coder(cpu);
  std::mt19937_64 rng(8);
  std::vector<HostBuffer> blocks;
  std::vector<GenerationRef> gens;
  for (std::uint32_t seg = 0; seg < 5; ++seg) {
    blocks.push_back(allocate_host(best->backend(), n * L));
    for (std::size_t i = 0; i < n * L; ++i) blocks.back().data()[i] = static_cast<std::uint8_t>(rng());
    gens.push_back({std::uint64_t{3} << 32 | seg,
                    blocks.back().data(),
                    n,
                    L,
                    n * L - 17,
                    {rlnc::coefficient_seed(7, 9), seg},
                    1234,
                    seg == 4 ? rlnc::Density::from_fraction(0.25) : rlnc::Density::dense()});
    best->add(gens.back());
  }
  for (int round = 0; round < 2; ++round)
    for (const auto& g : gens) {
      std::vector<std::uint8_t> got(16 * L, 0xAA), want(16 * L, 0x55);
      best->code(g, 32, 16, got.data());
      reference->code(g, 32, 16, want.data());
      ASSERT_EQ(got, want) << best->description() << ", segment " << (g.key & 0xFFFFFFFF);
    }
  EXPECT_FALSE(best->description().empty());
}

}  // namespace
}  // namespace ncast::server
