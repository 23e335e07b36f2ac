// ncast-swarm's batched GPU decoding (make_gpu_decode_batcher: gpu::BatchDecoder behind a
// DecodeBatcher) against the CPU decoder: the checks the host backend passes in tests/peer, here on
// the device, with the stream's real shape (n = 128, 1024-octet symbols) among the layouts.
#include <gtest/gtest.h>

#include "peer/decoder_factory.hpp"
#include "tests/gpu/gpu_test_support.hpp"
#include "tests/peer/batched_decoding_checks.hpp"

namespace ncast::peer {
namespace {

using namespace std::chrono_literals;

TEST(PeerGpuBatchDecoder, SegmentDecodersAgreeWithTheCpuPathOnSeveralThreads) {
  NCAST_REQUIRE_CUDA_DEVICE();
  const auto batcher = make_gpu_decode_batcher({64, 2000us});
  EXPECT_EQ(batcher->description().rfind("batched gpu ", 0), 0u) << batcher->description();
  testing::check_segment_decoders_agree(batcher,
                                        {{128, 1024, 128 * 1024 - 999},
                                         {48, 257, 48 * 257 - 100},
                                         {1, 5, 3},
                                         {256, 64, 256 * 64},
                                         {128, 1024, 128 * 1024}},
                                        4);
}

TEST(PeerGpuBatchDecoder, ReceiverOutputAndAccountingMatchTheCpuPath) {
  NCAST_REQUIRE_CUDA_DEVICE();
  testing::check_receivers_agree(make_gpu_decode_batcher({}), 6);
}

}  // namespace
}  // namespace ncast::peer
