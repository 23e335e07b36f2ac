#pragma once
// The Engine is the one seam between the codecs and the hardware that runs them: the RLNC and RS
// codecs express their bulk work as GF(2^8) matrix products over regions and leave the how to it.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "coding/backend.hpp"

namespace ncast {

class Engine {
 public:
  virtual ~Engine() = default;

  virtual Backend backend() const = 0;
  // For logs and benchmark records, e.g. "cpu avx512-gfni".
  virtual std::string description() const = 0;

  // outs[i] = Σ_j coefs[i·k + j] · ins[j] for i < m over len-byte host regions, or outs[i] ^= … when
  // accumulate. Outputs must not overlap inputs.
  virtual void multiply(const std::uint8_t* coefs, std::size_t m, std::size_t k, const std::uint8_t* const* ins,
                        std::uint8_t* const* outs, std::size_t len, bool accumulate) = 0;
};

// The engine for a backend choice. automatic takes the best usable one; asking for one that this
// build or machine cannot provide throws std::runtime_error saying why.
std::unique_ptr<Engine> make_engine(Backend backend);

}  // namespace ncast
