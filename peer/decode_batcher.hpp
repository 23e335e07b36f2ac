#pragma once
// Decoding shared by many receivers (a swarm's simulated peers), batched: each segment decoder
// eliminates only the coefficient vectors as symbols arrive (n bytes a row instead of n + L), so rank
// and innovation are exact and immediate, and keeps the payloads of its innovative symbols. At full
// rank it hands the generation (n × n coefficients, n × L payloads) to the DecodeBatcher, whose
// thread gathers the generations of every receiver and solves them together, one backend call per
// batch: on the GPU, gpu::BatchDecoder's inverse-then-multiply in one launch (decode_batcher_cuda.cpp,
// through make_gpu_decode_batcher() in decoder_factory.hpp). A batch goes when it holds max_batch
// generations or its oldest has waited max_wait, so a real-time peer is late by no more than that
// plus one batch's decode. The segment decoder is then complete but its data arrives later:
// SegmentDecoder::data_ready() turns true, the receiver's owner is told (on_decoded) and settles it
// (StreamReceiver::settle_decoded()); data() itself waits for the batch.
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "peer/segment_decoder.hpp"

namespace ncast::peer {

// One generation to solve: row i of coefs (n × n) is the coefficient vector of payload row i of rows
// (n × L). The backend replaces rows by the source symbols and sets ok; a singular matrix leaves ok
// false (the coefficient elimination makes that impossible, the backend still reports it).
struct BatchJob {
  std::size_t n = 0, symbol_size = 0;
  std::vector<std::uint8_t> coefs, rows;
  bool ok = false;
};

// Solves whole batches; decode() runs on the batcher's thread only.
class BatchDecodeBackend {
 public:
  virtual ~BatchDecodeBackend() = default;
  virtual std::string description() const = 0;
  // Throws on a device failure (the batcher then solves the batch on the host).
  virtual void decode(std::span<BatchJob* const> jobs) = 0;
};

// Gauss–Jordan on the host, one generation at a time (rlnc::Decoder): the fallback when a backend
// fails, and the reference the GPU backend is tested against.
std::unique_ptr<BatchDecodeBackend> make_host_batch_backend();

struct BatchOptions {
  std::size_t max_batch = 512;               // generations per backend call, at most
  std::chrono::microseconds max_wait{2000};  // the oldest generation waits no longer for company
};

struct BatchStats {
  std::uint64_t batches = 0, generations = 0;
  double decode_s = 0;                          // in backend calls (transfers and launches included)
  double latency_sum_s = 0, latency_max_s = 0;  // from full rank to decoded, per generation
  std::uint64_t failed_batches = 0;             // the backend threw; solved on the host instead
  std::uint64_t host_generations = 0;           // generations solved on the host for that reason
  std::string first_error;
};

class DecodeBatcher : public std::enable_shared_from_this<DecodeBatcher> {
 public:
  // Throws std::invalid_argument for max_batch 0 or a negative wait.
  DecodeBatcher(std::unique_ptr<BatchDecodeBackend> backend, const BatchOptions& options);
  ~DecodeBatcher();
  DecodeBatcher(const DecodeBatcher&) = delete;
  DecodeBatcher& operator=(const DecodeBatcher&) = delete;

  // The decoders of one receiver. on_decoded is called on the batcher's thread, without blocking, each
  // time one of their generations has been decoded (post the settling to the receiver's own thread);
  // never after the decoder concerned was reset or destroyed.
  std::unique_ptr<DecoderFactory> factory(std::function<void()> on_decoded);

  std::string description() const;
  const BatchDecodeBackend& backend() const { return *backend_; }
  const BatchOptions& options() const { return options_; }
  BatchStats stats() const;

  struct Pending;  // a generation submitted (decode_batcher.cpp)
  void submit(const std::shared_ptr<Pending>& job);
  // The decoder gave up its generation (reset, destroyed): no call-back from now on.
  void abandon(const std::shared_ptr<Pending>& job);
  // Waits until job is decoded.
  void wait(const std::shared_ptr<Pending>& job) const;
  bool decoded(const Pending& job) const;

 private:
  void run();

  std::unique_ptr<BatchDecodeBackend> backend_, host_;
  BatchOptions options_;
  mutable std::mutex mutex_;
  mutable std::condition_variable queued_, done_;
  std::deque<std::shared_ptr<Pending>> queue_;
  bool stopping_ = false;
  BatchStats stats_;
  std::thread thread_;
};

}  // namespace ncast::peer
