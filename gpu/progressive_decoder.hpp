#pragma once
// Progressive RLNC decoding of many generations at once on the device: the GPU counterpart of a set
// of rlnc::Decoder (one per generation), for swarms of simulated peers (one generation per peer and
// segment) and for large generations. Symbols arrive in batches (seeded, explicit, systematic or
// recoded, validated as the CPU decoder validates them); each is eliminated in arrival order, so rank,
// innovation and completion are exactly the CPU decoder's, and at rank n slot i holds source symbol i.
//
// A batch is worked in rounds of up to `round` arrivals per generation, every generation of a round
// together: seeded vectors are drawn on the device (cuRAND Philox, rlnc_coefficients.hpp); the
// arrivals' components along the rows held so far come off in one batched product; one block per
// generation eliminates the round's vectors among themselves in order (progressive_kernel.hpp); then
// three batched products apply the same to the payloads: each new reduced payload from the held slots
// and the round's raw payloads, and the held slots minus their components along the new ones. Per
// generation that is about (2 + round / n)·n²·L multiply-adds over its life, in products of many
// generations per launch.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <vector>

#include "coding/rlnc/batch.hpp"
#include "gpu/device_matrix.hpp"
#include "gpu/device_memory.hpp"
#include "gpu/gf_kernel.hpp"

namespace ncast::gpu {

struct ProgressiveOptions {
  // Arrivals of one generation eliminated together (1..64): larger rounds give larger products per
  // launch; the coefficient work within a round is serial per generation.
  std::size_t round = 32;
  Kernel kernel = Kernel::automatic;  // for the payload products
};

class ProgressiveDecoder {
 public:
  using Status = rlnc::GenerationSet::Status;
  using Outcome = rlnc::GenerationSet::Outcome;
  struct Arrival {
    std::uint32_t generation;
    rlnc::SymbolView symbol;
  };

  // On the current device. Throws std::invalid_argument for a round outside 1..64.
  explicit ProgressiveDecoder(const ProgressiveOptions& options = {});
  ~ProgressiveDecoder();
  ProgressiveDecoder(const ProgressiveDecoder&) = delete;
  ProgressiveDecoder& operator=(const ProgressiveDecoder&) = delete;

  // Starts decoding generation id (any number the caller picks) with its layout and the seed context
  // of its seeded symbols; reopening an id restarts it.
  void open(std::uint32_t id, const rlnc::GenerationLayout& layout, const rlnc::SeedContext& seeds);
  void close(std::uint32_t id);
  std::size_t size() const { return generations_.size(); }

  // Takes the arrivals in order (per generation, exactly as rlnc::Decoder::add one by one): a corrupt
  // symbol or an unknown generation is rejected in its outcome with the Errc and changes nothing;
  // the others are innovative or not, and `completed` marks the one that completed its generation.
  // outcomes must have one entry per arrival (std::invalid_argument otherwise). Returns how many
  // generations completed; returns when everything is done.
  std::size_t add(std::span<const Arrival> arrivals, std::span<Outcome> outcomes);

  // As rlnc::Decoder; rlnc::Error(unknown_generation) for an id that is not open.
  std::size_t rank(std::uint32_t id) const;
  bool complete(std::uint32_t id) const;
  std::size_t received(std::uint32_t id) const;
  std::size_t non_innovative(std::uint32_t id) const;
  // The source symbols of a complete generation (row i = symbol i, n × L), on the device, valid until
  // the generation is closed or reopened; rlnc::Error(not_decoded) before completion.
  ConstDeviceMatrixRef sources(std::uint32_t id) const;
  // Its data bytes (layout.data_bytes()) into out: rlnc::Error(not_decoded) before completion,
  // rlnc::Error(buffer_too_small) when out is shorter.
  void download(std::uint32_t id, std::span<std::uint8_t> out) const;

 private:
  struct Generation;
  struct Queued {
    std::size_t arrival;  // index into add()'s span
    bool seeded;          // coefficients drawn on the device; else resolved on the host:
    std::size_t coefs;    // the offset of its n coefficients in explicit_
  };
  using Round = std::vector<std::pair<Generation*, std::vector<Queued>>>;
  // The extent of a round: its rows (arrivals) and the largest generation and symbol in it.
  struct RoundShape {
    std::size_t rows = 0, max_len = 0;
    std::uint32_t max_n = 0, max_count = 0;
  };
  Generation& find(std::uint32_t id) const;
  // One round, in the order its steps run on the stream.
  void run_round(const Round& round, std::span<const Arrival> arrivals, std::span<Outcome> outcomes,
                 std::size_t& completed);
  RoundShape reserve_round(const Round& round);
  void stage_arrivals(const Round& round, std::span<const Arrival> arrivals, const RoundShape& shape);
  void eliminate(const Round& round, const RoundShape& shape);
  void update_slots(const Round& round, const RoundShape& shape);

  ProgressiveOptions options_;
  std::map<std::uint32_t, std::unique_ptr<Generation>> generations_;
  Stream stream_;
  std::vector<std::uint8_t> explicit_;
  // Round staging, grown as needed.
  PinnedBuffer host_payloads_, host_coefs_, host_requests_, host_jobs_, host_flags_;
  DeviceMatrix payloads_, coefs_, reduced_, new_rows_, transforms_, mixes_, combined_;
  DeviceBuffer requests_, jobs_, flags_;
  ProductBatch reduce_, from_slots_, from_payloads_, apply_;
};

}  // namespace ncast::gpu
