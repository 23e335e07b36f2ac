#pragma once
// make_decoder_factory() and make_gpu_decode_batcher(): defined by decoder_factory_cuda.cpp and
// decode_batcher_cuda.cpp in CUDA builds and by decoder_factory_cpu.cpp otherwise; link
// ncast_peer_decoders for them.
#include <memory>

#include "peer/decode_batcher.hpp"
#include "peer/segment_decoder.hpp"

namespace ncast::peer {

// cpu: the CPU decoder. gpu: the GPU decoder, or std::runtime_error saying why there is none (no CUDA
// in this build, no usable device). automatic: the GPU when one is usable, else the CPU.
std::unique_ptr<DecoderFactory> make_decoder_factory(DecoderChoice choice);

// Batched decoding on the GPU for many receivers at once (ncast-swarm --decoder gpu): a DecodeBatcher
// over gpu::BatchDecoder on the first usable device, or std::runtime_error saying why there is none.
std::shared_ptr<DecodeBatcher> make_gpu_decode_batcher(const BatchOptions& options);

}  // namespace ncast::peer
