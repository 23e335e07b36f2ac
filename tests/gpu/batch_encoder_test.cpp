// The batched GPU encoder against the CPU encoder (rlnc::Encoder::produce with the same options):
// many segments of different layouts, systematic and coded ids, dense and sparse vectors, requests in
// any order, payloads and vectors into poisoned page-locked buffers.
#include "gpu/batch_encoder.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <stdexcept>
#include <vector>

#include "coding/rlnc/encoder.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace ncast::gpu {
namespace {

using gpu::testing::random_bytes;

struct HostSegment {
  SegmentKey key;
  rlnc::SourceBlock block;
  rlnc::SeedContext seeds;
};

void check_against_cpu(const rlnc::EncoderOptions& options, bool shuffled, std::uint64_t seed) {
  SCOPED_TRACE(std::string(options.systematic ? "systematic" : "non-systematic") + " threshold " +
               std::to_string(options.density.threshold()) + (shuffled ? " shuffled" : ""));
  std::mt19937_64 rng(seed);
  const std::size_t layouts[][2] = {{128, 4096}, {17, 1200}, {1, 3}, {256, 1}, {32, 4096}, {5, 65536}};
  std::vector<HostSegment> segments;
  SegmentStore store(std::size_t{1} << 30);
  for (std::uint32_t g = 0; g < 6; ++g) {
    const auto [n, len] = layouts[g];
    const rlnc::GenerationLayout layout(n, len, n * len - (len > 1 ? 1 : 0));
    const auto data = random_bytes(layout.data_bytes(), rng);
    segments.push_back({{42, g}, rlnc::SourceBlock(layout, data), {rlnc::coefficient_seed(3, 42), g}});
    store.put(segments.back().key, layout, segments.back().block.bytes(), segments.back().seeds);
  }
  std::vector<EncodeRequest> requests;
  for (std::uint32_t g = 0; g < 6; ++g)
    for (std::uint32_t i = 0; i < 300; ++i)
      requests.push_back({{42, g}, i < 100 ? i : static_cast<std::uint32_t>(rng())});
  if (shuffled) std::shuffle(requests.begin(), requests.end(), rng);

  const std::size_t slot = 65536 + 16;
  PinnedBuffer out(requests.size() * slot, "test payloads");
  PinnedBuffer vectors(requests.size() * BatchEncoder::kVectorStride, "test vectors");
  std::memset(out.get(), 0xC3, out.size());
  std::memset(vectors.get(), 0xC3, vectors.size());
  BatchEncoder(store, options).encode(requests, out.get(), slot, vectors.get());

  std::vector<rlnc::Encoder> cpu;
  for (const auto& s : segments) cpu.emplace_back(s.block, s.seeds, options);
  for (std::size_t r = 0; r < requests.size(); ++r) {
    const auto& enc = cpu[requests[r].segment.segment];
    const std::size_t n = enc.layout().n(), len = enc.layout().symbol_size();
    std::vector<std::uint8_t> payload(len), vector(n);
    std::uint8_t* p = payload.data();
    enc.produce(requests[r].id, 1, &p, vector.data());
    const std::uint8_t* got = out.get() + r * slot;
    ASSERT_EQ(std::vector<std::uint8_t>(got, got + len), payload)
        << "request " << r << " segment " << requests[r].segment.segment << " id " << requests[r].id;
    ASSERT_EQ(got[len], 0xC3) << "request " << r << " wrote past its payload";
    const std::uint8_t* v = vectors.get() + r * BatchEncoder::kVectorStride;
    ASSERT_EQ(std::vector<std::uint8_t>(v, v + n), vector) << "request " << r;
  }
}

TEST(BatchEncoder, SameBytesAsTheCpuEncoder) {
  NCAST_REQUIRE_CUDA_DEVICE();
  check_against_cpu({.systematic = true}, false, 1);
  check_against_cpu({.systematic = false}, true, 2);
  check_against_cpu({.systematic = true, .density = rlnc::Density::from_threshold(700)}, true, 3);
  check_against_cpu({.systematic = false, .density = rlnc::Density::from_threshold(1)}, false, 4);
}

TEST(BatchEncoder, RefusesMissingSegmentsAndShortSlots) {
  NCAST_REQUIRE_CUDA_DEVICE();
  SegmentStore store(1 << 20);
  const rlnc::GenerationLayout layout(2, 100, 200);
  const std::vector<std::uint8_t> block(200, 7);
  store.put({1, 0}, layout, block, {});
  BatchEncoder encoder(store);
  std::vector<std::uint8_t> out(1000, 0xEE);
  const EncodeRequest missing[] = {{{1, 0}, 0}, {{1, 5}, 0}};
  EXPECT_THROW(encoder.encode(missing, out.data(), 100), std::out_of_range);
  const EncodeRequest ok[] = {{{1, 0}, 3}};
  EXPECT_THROW(encoder.encode(ok, out.data(), 99), std::invalid_argument);
  EXPECT_EQ(out, std::vector<std::uint8_t>(1000, 0xEE));
  encoder.encode({}, out.data(), 100);
}

}  // namespace
}  // namespace ncast::gpu
