// make_decoder_factory() and make_gpu_decode_batcher() of builds without CUDA: the CPU decoder is all
// there is.
#include <stdexcept>

#include "peer/decoder_factory.hpp"

namespace ncast::peer {

std::unique_ptr<DecoderFactory> make_decoder_factory(DecoderChoice choice) {
  if (choice == DecoderChoice::gpu)
    throw std::runtime_error("--decoder gpu: this ncast-peer was built without CUDA (use --decoder cpu or auto)");
  return make_cpu_decoder_factory();
}

std::shared_ptr<DecodeBatcher> make_gpu_decode_batcher(const BatchOptions&) {
  throw std::runtime_error("--decoder gpu: this program was built without CUDA (use --decoder cpu or auto)");
}

}  // namespace ncast::peer
