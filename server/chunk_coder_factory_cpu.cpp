// make_chunk_coder() of builds without CUDA: the engine is all there is.
#include "server/chunk_coder.hpp"

namespace ncast::server {

std::unique_ptr<ChunkCoder> make_chunk_coder(Engine& engine, std::size_t, bool) {
  return make_engine_chunk_coder(engine);
}

}  // namespace ncast::server
