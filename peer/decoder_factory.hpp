#pragma once
// make_decoder_factory(): defined by decoder_factory_cuda.cpp in CUDA builds (the GPU progressive
// decoder when asked) and by decoder_factory_cpu.cpp otherwise; link ncast_peer_decoders for it.
#include <memory>

#include "peer/segment_decoder.hpp"

namespace ncast::peer {

// cpu: the CPU decoder. gpu: the GPU decoder, or std::runtime_error saying why there is none (no CUDA
// in this build, no usable device). automatic: the GPU when one is usable, else the CPU.
std::unique_ptr<DecoderFactory> make_decoder_factory(DecoderChoice choice);

}  // namespace ncast::peer
