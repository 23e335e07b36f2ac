#pragma once
// Systematic Reed–Solomon erasure coding over GF(2^8): k data shards, m parity shards, any k of the
// k + m give back the rest. A stripe is k + m equally long shards; shard i < k is data shard i,
// shard k + p is parity shard p. Byte-compatible with ISA-L and klauspost/reedsolomon for the same
// matrix (see generator.hpp).
//
// Every bulk operation is one product on the Engine (cache-blocked dot_multi on the CPU), so a
// backend is a choice in Options, not a different API. A Codec is safe to use from several threads
// at once; the hot paths (encode, reconstruct of a cached pattern) take no allocation and copy nothing.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>

#include "coding/backend.hpp"
#include "coding/engine.hpp"
#include "coding/host_memory.hpp"
#include "coding/rs/decode_cache.hpp"
#include "coding/rs/decode_plan.hpp"
#include "coding/rs/generator.hpp"
#include "coding/rs/matrix.hpp"
#include "coding/rs/shard_set.hpp"

namespace ncast::rs {

struct Options {
  MatrixKind matrix = MatrixKind::cauchy;
  Matrix custom_parity{};  // the m × k parity rows when matrix == custom
  Backend backend = Backend::automatic;
  // Erasure patterns whose decode rows are kept (least recently used goes first); 0 keeps none.
  std::size_t decode_cache_capacity = 256;
};

// The shards at hand cannot give back the ones asked for: more than m are lost, or (custom matrices
// only) the surviving rows are not invertible.
class Unrecoverable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Arguments named shards are k + m pointers, one per shard index, each to len bytes. Shards that are
// neither read nor written by a call may be null (erased shards that are not rebuilt). Invalid
// arguments throw std::invalid_argument.
class Codec {
 public:
  // Throws std::invalid_argument for a bad code size or custom matrix, std::runtime_error when the
  // backend cannot be had (make_engine says why).
  Codec(std::size_t k, std::size_t m, const Options& options = {});
  // Runs on the given engine (shared with other codecs); options.backend is ignored.
  Codec(std::size_t k, std::size_t m, const Options& options, std::shared_ptr<Engine> engine);

  std::size_t data_shards() const { return k_; }
  std::size_t parity_shards() const { return m_; }
  std::size_t total_shards() const { return k_ + m_; }
  MatrixKind matrix_kind() const { return kind_; }
  // The m × k parity rows: parity shard p = Σ_j parity_matrix()(p, j) · data shard j.
  const Matrix& parity_matrix() const { return parity_; }
  Engine& engine() const { return *engine_; }
  const DecodeCache& decode_cache() const { return cache_; }
  // Forgets every cached decode pattern (the next reconstruction of each inverts again).
  void clear_decode_cache() const { cache_.clear(); }

  // bytes of host memory suited to this codec's backend (pinned for CUDA, 64-byte aligned otherwise).
  // Any memory works with every call; this is the fastest.
  HostBuffer allocate(std::size_t bytes) const { return allocate_host(engine_->backend(), bytes); }

  // parity[p] = Σ_j P(p, j) · data[j] for the k data and m parity pointers.
  void encode(std::span<const std::uint8_t* const> data, std::span<std::uint8_t* const> parity, std::size_t len) const;
  // The same with all k + m shards in one array.
  void encode(std::span<std::uint8_t* const> shards, std::size_t len) const;
  // parity[p] ^= P(p, index) · data: the contribution of one data shard. Starting from zeroed parity
  // and adding every data shard as it arrives equals encode (progressive encoding); adding the XOR of
  // the old and new contents of a shard patches parity for that change.
  void encode_one(std::size_t index, const std::uint8_t* data, std::span<std::uint8_t* const> parity,
                  std::size_t len) const;
  // Data shard index changed from old_data to new_data: parity is patched from the difference,
  // reading only that shard's old and new bytes (the other data shards are not needed).
  void update(std::size_t index, const std::uint8_t* old_data, const std::uint8_t* new_data,
              std::span<std::uint8_t* const> parity, std::size_t len) const;
  // Whether the parity shards are the encoding of the data shards.
  bool verify(std::span<const std::uint8_t* const> shards, std::size_t len) const;

  // Rebuilds every erased shard (data or parity) from the others; erased lists at most m distinct
  // shard indices (duplicates are ignored). Reads k survivors, the lowest-numbered ones.
  void reconstruct(std::span<std::uint8_t* const> shards, std::size_t len, std::span<const std::size_t> erased) const;
  // Rebuilds only the erased shards listed in wanted (wanted shards that are not erased are left alone).
  void reconstruct(std::span<std::uint8_t* const> shards, std::size_t len, std::span<const std::size_t> erased,
                   std::span<const std::size_t> wanted) const;
  // Rebuilds only the erased data shards: the read path, which has no use for parity.
  void reconstruct_data(std::span<std::uint8_t* const> shards, std::size_t len,
                        std::span<const std::size_t> erased) const;

  // Many stripes in one call: shards holds count × (k + m) pointers, stripe after stripe. Stripes
  // whose shards follow each other in memory (shard i of stripe s + 1 starts len bytes after shard i
  // of stripe s) are coded as one region, so a shard-major layout costs a single engine product.
  void encode_batch(std::span<std::uint8_t* const> shards, std::size_t len) const;
  // Rebuilds the same erased shards in every stripe of the batch (a failed disk, a lost node).
  void reconstruct_batch(std::span<std::uint8_t* const> shards, std::size_t len,
                         std::span<const std::size_t> erased) const;

  // The shards a reconstruction of erased reads: the k lowest-numbered survivors. Streaming callers
  // use it to fetch only what will be read. Throws Unrecoverable when more than m are erased.
  ShardSet sources_for(std::span<const std::size_t> erased) const;

 private:
  using Plan = DecodePlan;
  using Want = DecodeWant;
  Plan plan(std::span<const std::size_t> erased, Want want, std::span<const std::size_t> wanted) const;
  DecodeRows rows_for(const Plan& plan) const;
  void rebuild(std::span<std::uint8_t* const> shards, std::size_t len, std::size_t stripes,
               std::span<const std::size_t> erased, Want want, std::span<const std::size_t> wanted) const;
  // The path of a request the thread's recent plan does not match, out of line so that the other keeps
  // a small stack frame.
  [[gnu::noinline]] void plan_and_run(const DecodeRequest& request, std::span<std::uint8_t* const> shards,
                                      std::size_t len, std::size_t stripes) const;
  void run_plan(const Plan& plan, const std::uint8_t* rows, std::span<std::uint8_t* const> shards, std::size_t len,
                std::size_t stripes) const;
  void check_shards(std::span<const std::uint8_t* const> shards, std::size_t count, const char* what) const;
  std::size_t stripes_in(std::span<std::uint8_t* const> shards, bool batch, const char* what) const;

  std::size_t k_, m_;
  MatrixKind kind_;
  Matrix parity_;
  Matrix columns_;  // parity_ transposed: row j is the m coefficients of data shard j
  ShardSet data_mask_;
  std::shared_ptr<Engine> engine_;
  mutable DecodeCache cache_;
};

}  // namespace ncast::rs
