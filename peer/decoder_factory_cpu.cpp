// make_decoder_factory() of builds without CUDA: the CPU decoder is all there is.
#include <stdexcept>

#include "peer/decoder_factory.hpp"

namespace ncast::peer {

std::unique_ptr<DecoderFactory> make_decoder_factory(DecoderChoice choice) {
  if (choice == DecoderChoice::gpu)
    throw std::runtime_error("--decoder gpu: this ncast-peer was built without CUDA (use --decoder cpu or auto)");
  return make_cpu_decoder_factory();
}

}  // namespace ncast::peer
