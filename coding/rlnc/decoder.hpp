#pragma once
// Progressive RLNC decoder of one generation, decoding in place into the caller's buffer.
//
// Each arriving symbol is eliminated at once against the coefficient matrix, which is kept in
// reduced row echelon form (rows of n bytes: cheap), so rank, innovation and which source symbols are
// already determined are always exact. The payload work (rows of L bytes: the real cost) is deferred
// for up to `batch` innovative arrivals and then done in three cache-blocked products: the new rows
// against the settled ones, the new rows among themselves, the settled rows against the new ones.
// That is the same n²·L multiply-adds as eager Gauss–Jordan, done by dot_multi instead of one axpy
// per row pair.
//
// Storage: the row whose pivot is column c lives in symbol slot c of the output buffer, so at rank n
// slot i holds source symbol i with no final permutation. Every buffer is allocated by the
// constructor; adding a symbol allocates nothing.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "coding/rlnc/coefficients.hpp"
#include "coding/rlnc/generation.hpp"
#include "coding/rlnc/symbol.hpp"

namespace ncast::rlnc {

struct DecoderOptions {
  // Innovative arrivals whose payload work is deferred and done together (1..256). Larger batches run
  // the products at higher efficiency; smaller ones spread the work more evenly over arrivals.
  std::size_t batch = 16;
};

enum class AddResult : std::uint8_t { innovative, non_innovative };

class Decoder {
 public:
  // out must hold at least n·L bytes and outlive the decoder, which overwrites it freely; once
  // complete, source symbol i is at out[i·L .. i·L+L). Seeded symbols draw from seeds.
  Decoder(const GenerationLayout& layout, std::span<std::uint8_t> out, const SeedContext& seeds,
          const DecoderOptions& options = {});

  // Takes one symbol. Non-innovative ones (linear combinations of what is held, duplicates, anything
  // after completion) are counted and dropped. A corrupt symbol throws Error and changes nothing.
  AddResult add(const SymbolView& symbol);
  // Forgets everything received; the output buffer is reused.
  void reset();

  const GenerationLayout& layout() const { return layout_; }
  const SeedContext& seeds() const { return seeds_; }
  std::size_t rank() const { return rank_; }
  bool complete() const { return rank_ == layout_.n(); }
  std::size_t received() const { return received_; }              // every add() that did not throw
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

  // What the node holds, for recoding: rank() rows, row r being a payload in the buffer together with
  // its coefficient vector over the source symbols (n bytes), valid until the next add/flush/reset.
  const std::uint8_t* held_payload(std::size_t r) const { return slot(pivot_order_[r]); }
  const std::uint8_t* held_coefficients(std::size_t r) const { return held_row(pivot_order_[r]); }

 private:
  std::uint8_t* slot(std::size_t c) const { return out_.data() + c * layout_.symbol_size(); }
  std::uint8_t* rref_row(std::size_t c) { return rref_.data() + c * stride_; }
  const std::uint8_t* rref_row(std::size_t c) const { return rref_.data() + c * stride_; }
  std::uint8_t* held_row(std::size_t c) { return held_.data() + c * stride_; }
  const std::uint8_t* held_row(std::size_t c) const { return held_.data() + c * stride_; }
  bool row_is_unit(std::size_t c) const;

  void forward_new_rows();
  void solve_new_rows();
  void update_settled_rows();

  GenerationLayout layout_;
  std::span<std::uint8_t> out_;
  SeedContext seeds_;
  std::size_t batch_;
  std::size_t stride_;  // bytes per coefficient row

  // rref_: the eager reduced row echelon form, row c = the row with pivot column c.
  // held_: row c = the coefficients of what slot c holds now (the raw vector of a pending row).
  std::vector<std::uint8_t> rref_, held_;
  std::vector<std::uint8_t> is_pivot_, is_pending_;
  mutable std::vector<std::uint8_t> decoded_;  // cache: once decoded, always decoded
  std::vector<std::uint16_t> pivot_order_;     // pivot columns in arrival order
  std::vector<std::uint16_t> pending_;         // pivots whose payload work is deferred
  std::size_t rank_ = 0, received_ = 0, non_innovative_ = 0;

  // Scratch, sized once.
  std::vector<std::uint8_t> raw_, work_;
  std::vector<std::uint8_t> coefs_, inverse_;
  std::vector<const std::uint8_t*> srcs_, row_srcs_;
  std::vector<std::uint8_t*> dsts_, row_dsts_;
  std::vector<std::uint16_t> cols_, rows_;
  std::vector<std::uint8_t> chunk_;  // batch × chunk bytes of payload for the in-batch solve
  std::size_t chunk_len_;
};

}  // namespace ncast::rlnc
