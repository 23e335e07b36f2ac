#pragma once
// Coded symbols for many (segment, symbol id) requests across the resident segments of a
// SegmentStore, made on the devices that hold them: coefficient vectors drawn there with cuRAND, one
// batched product launch per chunk of requests, and payloads copied into the caller's host buffer
// while the next chunk computes (two streams per device). The bytes are those of
// rlnc::Encoder::produce with the same options: systematic ids are the source symbols themselves
// (made as products with unit vectors, so one launch serves every kind), coded ids draw their
// vectors from the segment's seed context.
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <vector>

#include "coding/rlnc/encoder.hpp"
#include "gpu/gf_kernel.hpp"
#include "gpu/segment_store.hpp"

namespace ncast::gpu {

struct EncodeRequest {
  SegmentKey segment;
  std::uint32_t id;
};

class BatchEncoder {
 public:
  // Only options.systematic and options.density matter here (the caller frames symbols).
  explicit BatchEncoder(SegmentStore& store, const rlnc::EncoderOptions& options = {},
                        Kernel kernel = Kernel::automatic);
  ~BatchEncoder();
  BatchEncoder(const BatchEncoder&) = delete;
  BatchEncoder& operator=(const BatchEncoder&) = delete;

  // The payload of requests[r] to out + r·slot (its segment's symbol size in bytes) and, when
  // coefficients is not null, its vector to coefficients + r·kVectorStride (n bytes). Page-locked
  // buffers (PinnedBuffer) make the copies asynchronous. Returns when everything is written. Throws
  // std::out_of_range for a segment that is not resident and std::invalid_argument when slot is
  // smaller than a requested segment's symbol size; nothing is written then.
  void encode(std::span<const EncodeRequest> requests, std::uint8_t* out, std::size_t slot,
              std::uint8_t* coefficients = nullptr);

  static constexpr std::size_t kVectorStride = 256;

 private:
  struct Lane;
  using Segments = std::vector<const ResidentSegment*>;  // per request; held alive by encode()
  void run_chunk(Lane& lane, std::span<const std::size_t> chunk, std::span<const EncodeRequest> requests,
                 const Segments& segments, std::uint8_t* out, std::size_t slot, std::uint8_t* coefficients);

  SegmentStore& store_;
  rlnc::EncoderOptions options_;
  Kernel kernel_;
  std::map<int, std::vector<std::unique_ptr<Lane>>> lanes_;  // per device
};

}  // namespace ncast::gpu
