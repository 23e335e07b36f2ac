#pragma once
// Reed–Solomon on device-resident stripes: a stripe is a (k + m) × len device matrix whose row i is
// shard i (data shards first, then parity), coded with the matrices of the rs::Codec it is made
// from, so the bytes are those of the CPU codec. Encode and reconstruct run wholly on the device.
#include <cuda_runtime.h>

#include <cstddef>
#include <map>
#include <span>
#include <vector>

#include "coding/rs/codec.hpp"
#include "gpu/device_matrix.hpp"
#include "gpu/gf_kernel.hpp"

namespace ncast::gpu {

class DeviceRsCodec {
 public:
  // Uploads the codec's parity matrix to the current device, which the stripes must be on too.
  explicit DeviceRsCodec(const rs::Codec& codec, Kernel kernel = Kernel::automatic);

  std::size_t data_shards() const { return k_; }
  std::size_t parity_shards() const { return m_; }

  // Parity rows from data rows, enqueued on stream. Throws std::invalid_argument unless stripe has
  // k + m rows.
  void encode(DeviceMatrixRef stripe, cudaStream_t stream) const;
  // Rebuilds the erased shards (at most m distinct indices) from the k lowest-numbered survivors,
  // enqueued on stream; rs::Unrecoverable when more than m are erased. Decode matrices are kept per
  // erasure pattern.
  void reconstruct(DeviceMatrixRef stripe, std::span<const std::size_t> erased, cudaStream_t stream);

 private:
  void check_stripe(const DeviceMatrixRef& stripe) const;
  // The rows that rebuild `erased` (sorted, distinct), as coefficients over all k + m shards (zero for
  // shards that are not read): the sources of the product are then the whole stripe.
  const DeviceMatrix& decode_rows(const std::vector<std::size_t>& erased);

  std::size_t k_, m_;
  Kernel kernel_;
  rs::Matrix generator_;  // (k + m) × k: identity over the parity rows
  DeviceMatrix parity_;
  std::map<std::vector<std::size_t>, DeviceMatrix> decode_;
  DeviceMatrix scratch_;  // rebuilt shards, before they go to their rows
};

}  // namespace ncast::gpu
