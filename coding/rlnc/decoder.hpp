#pragma once
// Progressive RLNC decoder of one generation, decoding in place into the caller's buffer.
//
// Coefficients (rows of n bytes: cheap) are eliminated as each symbol arrives, so rank, innovation
// and which source symbols are already determined are always exact. Payloads (rows of L bytes: the
// real cost) wait, raw, for up to `batch` innovative arrivals and are then brought to reduced form
// together by two cache-blocked products: the new rows from their raw payloads and the settled rows
// (by the transform recorded while their coefficients were eliminated), then the settled rows minus
// their components along the new ones. That is the n²·L multiply-adds of Gauss–Jordan, done by
// dot_multi rather than by one axpy per pair of rows.
//
// The row whose pivot is column c lives in symbol slot c of the output buffer, so at rank n slot i
// holds source symbol i with no final permutation. Every buffer is allocated by the constructor;
// adding a symbol allocates nothing.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "coding/host_memory.hpp"
#include "coding/rlnc/coefficients.hpp"
#include "coding/rlnc/generation.hpp"
#include "coding/rlnc/symbol.hpp"

namespace ncast::rlnc {

struct DecoderOptions {
  // Innovative arrivals whose payload work is deferred and done together (1..256). Larger batches run
  // the products at higher efficiency; smaller ones spread the work more evenly over arrivals.
  std::size_t batch = 32;
};

enum class AddResult : std::uint8_t { innovative, non_innovative };

class Decoder {
 public:
  // out must hold at least n·L bytes and outlive the decoder, which overwrites it freely; once
  // complete, source symbol i is at out[i·L .. i·L+L). Seeded symbols draw from seeds.
  Decoder(const GenerationLayout& layout, std::span<std::uint8_t> out, const SeedContext& seeds,
          const DecoderOptions& options = {});
  // One decoder per buffer: a copy would decode into the same bytes.
  Decoder(const Decoder&) = delete;
  Decoder& operator=(const Decoder&) = delete;
  Decoder(Decoder&&) = default;
  Decoder& operator=(Decoder&&) = default;

  // Takes one symbol. Non-innovative ones (linear combinations of what is held, duplicates, anything
  // after completion) are counted and dropped. A corrupt symbol throws Error and changes nothing.
  AddResult add(const SymbolView& symbol);
  // Forgets everything received; the output buffer is reused.
  void reset();

  const GenerationLayout& layout() const { return layout_; }
  const SeedContext& seeds() const { return seeds_; }
  std::size_t rank() const { return rank_; }
  bool complete() const { return rank_ == layout_.n(); }
  std::size_t received() const { return received_; }  // every add() that did not throw
  std::size_t non_innovative() const { return non_innovative_; }

  // Whether source symbol i is already determined by what has arrived (early release).
  bool is_decoded(std::size_t i) const;
  std::size_t decoded_count() const;
  // Finishes the deferred payload work, so every decoded source symbol is final in the buffer.
  void flush();
  // Source symbol i, final; Error(not_decoded) if it is not decoded yet.
  std::span<const std::uint8_t> source_symbol(std::size_t i);
  // The object bytes (data_bytes of the layout); Error(not_decoded) before completion.
  std::span<const std::uint8_t> data() const;

  // For recoding: count combinations of the rank() rows held (payloads and their coefficient vectors
  // over the sources), output i = Σ_r mix[i·rank + r] · row r. payloads[i] gets L bytes,
  // coefficients[i·n .. i·n+n) the vector. Allocates only when count grows past earlier calls.
  void combine_held(const std::uint8_t* mix, std::size_t count, std::uint8_t* const* payloads,
                    std::uint8_t* coefficients) const;

 private:
  std::uint8_t* slot(std::size_t c) const { return out_.data() + c * layout_.symbol_size(); }
  std::uint8_t* row(std::size_t c) { return rows_.data() + c * stride_; }
  const std::uint8_t* row(std::size_t c) const { return rows_.data() + c * stride_; }
  std::uint8_t* staged(std::size_t b) const { return staging_.data() + b * staging_stride_; }
  std::uint8_t* raw_row(std::size_t b) { return raw_rows_.data() + b * stride_; }
  const std::uint8_t* raw_row(std::size_t b) const { return raw_rows_.data() + b * stride_; }
  // Row b of the transform, stored after the coefficients of pending row b.
  std::uint8_t* transform_row(std::size_t b) { return row(pending_[b]) + layout_.n(); }
  bool unit_from(const std::uint8_t* r, std::size_t c) const;
  bool pending_is_run() const;

  void settle_new_rows();
  void update_settled_rows();
  // The three eliminations of add(), over the columns [lo, n) of the arriving vector v (width of them)
  // and its transform part (which pending rows it combines), stored after column n - 1.
  void clear_settled_columns(std::uint8_t* v, std::size_t lo, std::size_t width);
  void clear_pending_columns(std::uint8_t* v, std::size_t lo, std::size_t width);
  void clear_from_pending_rows(std::size_t c);

  GenerationLayout layout_;
  std::span<std::uint8_t> out_;
  SeedContext seeds_;
  std::size_t batch_;
  std::size_t stride_;  // bytes per coefficient row

  // Coefficient rows by pivot column: for a settled pivot its reduced row as of the last flush, for a
  // pending one its reduced row now. Every column below lo_ is a settled pivot, so those columns
  // are known (0, or 1 on the diagonal) and rows are stored and computed only from lo_ on. A pending
  // row b carries after its n coefficients row b of the transform taking the pending payloads, once
  // cleared of settled rows, to their reduced form (batch bytes), so one product updates both.
  std::vector<std::uint8_t> rows_;
  std::size_t lo_ = 0;
  // Pending row b (pending_[b]): its raw payload (at staged(b)) and raw coefficients. Staged payloads
  // lie an odd number of cache lines apart, so that the products, which read them all at one column,
  // do not find them all in one L1 set as 4 KiB symbols would put them.
  HostBuffer staging_;
  std::size_t staging_stride_;
  std::vector<std::uint8_t> raw_rows_;
  std::vector<std::uint8_t> is_pivot_, is_pending_, unit_;
  mutable std::vector<std::uint8_t> decoded_;  // cache: once decoded, always decoded
  std::vector<std::uint16_t> pivot_order_;     // pivot columns in arrival order
  std::vector<std::uint16_t> pending_;         // pivots whose payload work is deferred
  std::vector<std::uint16_t> active_, units_;  // settled pivots whose rows are not / are unit vectors
  std::size_t rank_ = 0, received_ = 0, non_innovative_ = 0;

  // Scratch, sized once.
  std::vector<std::uint8_t> raw_, work_, any_;
  mutable std::vector<std::uint8_t> probe_;
  std::vector<std::uint8_t> coefs_, fcoefs_, gcoefs_;
  mutable std::vector<std::uint8_t> probe_coefs_;
  std::vector<const std::uint8_t*> srcs_, row_srcs_;
  mutable std::vector<const std::uint8_t*> probe_srcs_, held_srcs_;
  mutable std::vector<std::uint8_t*> held_dsts_;
  mutable std::vector<std::uint8_t> pending_mix_;
  std::vector<std::uint8_t*> dsts_, row_dsts_;
  std::vector<std::uint16_t> cols_, touched_;
};

}  // namespace ncast::rlnc
