#pragma once
// Whole RLNC generations decoded on the device, many at once, in the inverse-then-multiply form: the
// n × n matrix of the coefficient vectors of n received symbols is inverted by Gauss–Jordan (one
// thread block per generation, the matrix in its registers, every generation of the call in one
// launch), then the sources are C⁻¹ · payloads (one batched product launch, by default with the
// kernel that Kernel::automatic picks for the shape). For swarms of simulated peers and for large
// generations, where a progressive decoder per generation on the CPU is the bottleneck; arrivals
// one at a time go to ProgressiveDecoder (progressive_decoder.hpp).
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "gpu/device_matrix.hpp"
#include "gpu/device_memory.hpp"
#include "gpu/gf_kernel.hpp"

namespace ncast::gpu {

// One generation: row i of coefs (n × n) is the coefficient vector of the symbol whose payload is row
// i of payloads (n × len); out (n × len) receives source symbol i in row i. All on the current device.
struct DecodeJob {
  ConstDeviceMatrixRef coefs, payloads;
  DeviceMatrixRef out;
};

class BatchDecoder {
 public:
  explicit BatchDecoder(Kernel kernel = Kernel::automatic);
  ~BatchDecoder();
  BatchDecoder(const BatchDecoder&) = delete;
  BatchDecoder& operator=(const BatchDecoder&) = delete;

  // Decodes every job on stream and returns, per job, whether its coefficient matrix had full rank;
  // the out of a job that had not is left as it was. Returns when all is done. Throws
  // std::invalid_argument for shapes that do not fit (n must be 1..256).
  std::vector<bool> decode(std::span<const DecodeJob> jobs, cudaStream_t stream);

 private:
  Kernel kernel_;
  PinnedBuffer host_jobs_, host_flags_;
  DeviceBuffer device_jobs_, device_flags_;
  DeviceMatrix inverses_;
  ProductBatch batch_;
};

}  // namespace ncast::gpu
