#include "coding/rlnc/decoder.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "coding/gf256.hpp"
#include "coding/region.hpp"
#include "coding/rlnc/error.hpp"

namespace ncast::rlnc {
namespace {

// Column width of the in-batch solve: the batch's rows of this width are copied aside and multiplied
// back, so the scratch stays batch × 4 KiB however long the symbols are.
constexpr std::size_t kSolveChunk = 4096;

}  // namespace

Decoder::Decoder(const GenerationLayout& layout, std::span<std::uint8_t> out, const SeedContext& seeds,
                 const DecoderOptions& options)
    : layout_(layout), out_(out), seeds_(seeds), batch_(options.batch) {
  const std::size_t n = layout.n();
  if (batch_ < 1 || batch_ > kMaxSymbols)
    throw Error(Errc::bad_option, "decoder batch " + std::to_string(batch_) + " is not in 1..256");
  if (out.size() < layout.block_bytes())
    throw Error(Errc::buffer_too_small, "output buffer of " + std::to_string(out.size()) + " bytes, the generation needs " +
                                            std::to_string(layout.block_bytes()));
  stride_ = (n + 63) / 64 * 64;
  rref_.assign(n * stride_, 0);
  held_.assign(n * stride_, 0);
  is_pivot_.assign(n, 0);
  is_pending_.assign(n, 0);
  decoded_.assign(n, 0);
  pivot_order_.reserve(n);
  pending_.reserve(batch_);
  raw_.assign(stride_, 0);
  work_.assign(stride_, 0);
  coefs_.assign(n * std::max(batch_, std::size_t{1}), 0);
  inverse_.assign(2 * batch_ * batch_, 0);
  srcs_.resize(n);
  row_srcs_.resize(n);
  dsts_.resize(n);
  row_dsts_.resize(n);
  cols_.reserve(n);
  rows_.reserve(n);
  chunk_len_ = std::min(layout.symbol_size(), kSolveChunk);
  chunk_.assign(batch_ * chunk_len_, 0);
}

void Decoder::reset() {
  std::fill(is_pivot_.begin(), is_pivot_.end(), 0);
  std::fill(is_pending_.begin(), is_pending_.end(), 0);
  std::fill(decoded_.begin(), decoded_.end(), 0);
  pivot_order_.clear();
  pending_.clear();
  rank_ = received_ = non_innovative_ = 0;
}

AddResult Decoder::add(const SymbolView& symbol) {
  const std::size_t n = layout_.n();
  const gf::RegionKernels& k = gf::kernels();
  resolve_coefficients(symbol, layout_, seeds_, {raw_.data(), n});
  ++received_;
  if (complete()) {
    ++non_innovative_;
    return AddResult::non_innovative;
  }

  // Eliminate every pivot column at once: the RREF rows are zero at each other's pivots, so the
  // multipliers are the vector's own entries there.
  std::uint8_t* v = work_.data();
  std::copy_n(raw_.data(), n, v);
  std::size_t used = 0;
  for (const std::uint16_t p : pivot_order_)
    if (v[p] != 0) {
      srcs_[used] = rref_row(p);
      coefs_[used++] = v[p];
    }
  if (used > 0) k.dot_multi(&v, 1, srcs_.data(), used, coefs_.data(), n, true);

  std::size_t c = 0;
  while (c < n && v[c] == 0) ++c;
  if (c == n) {
    ++non_innovative_;
    return AddResult::non_innovative;
  }

  // The new row, normalised, then cleared from the column of every other row.
  k.mul(rref_row(c), v, gf::inv(v[c]), n);
  std::size_t touched = 0;
  for (const std::uint16_t p : pivot_order_) {
    const std::uint8_t f = rref_row(p)[c];
    if (f != 0) {
      row_dsts_[touched] = rref_row(p);
      coefs_[touched++] = f;
    }
  }
  const std::uint8_t* pivot_row = rref_row(c);
  if (touched > 0) k.dot_multi(row_dsts_.data(), touched, &pivot_row, 1, coefs_.data(), n, true);

  // The payload waits in its slot, raw, with its raw coefficients, until the batch is flushed.
  std::memmove(slot(c), symbol.payload.data(), layout_.symbol_size());
  std::copy_n(raw_.data(), n, held_row(c));
  is_pivot_[c] = 1;
  is_pending_[c] = 1;
  pivot_order_.push_back(static_cast<std::uint16_t>(c));
  pending_.push_back(static_cast<std::uint16_t>(c));
  ++rank_;
  if (pending_.size() == batch_ || complete()) flush();
  return AddResult::innovative;
}

void Decoder::flush() {
  if (pending_.empty()) return;
  forward_new_rows();
  solve_new_rows();
  update_settled_rows();
  // Every row now holds what the eager form says; rows_ lists the settled rows that changed.
  for (const std::uint16_t p : rows_) std::copy_n(rref_row(p), layout_.n(), held_row(p));
  for (const std::uint16_t c : pending_) {
    std::copy_n(rref_row(c), layout_.n(), held_row(c));
    is_pending_[c] = 0;
  }
  pending_.clear();
}

// Step 1: each new row minus its components along the settled rows, whose coefficient rows are the
// unit vectors on the settled pivots, so the multipliers are the new rows' raw entries there.
void Decoder::forward_new_rows() {
  const std::size_t n = layout_.n(), len = layout_.symbol_size();
  cols_.clear();
  for (const std::uint16_t p : pivot_order_) {
    if (is_pending_[p]) continue;
    for (const std::uint16_t b : pending_)
      if (held_row(b)[p] != 0) {
        cols_.push_back(p);
        break;
      }
  }
  if (cols_.empty()) return;
  rows_.clear();
  for (const std::uint16_t b : pending_)
    for (const std::uint16_t p : cols_)
      if (held_row(b)[p] != 0) {
        rows_.push_back(b);
        break;
      }
  const std::size_t m = rows_.size(), kk = cols_.size();
  for (std::size_t i = 0; i < m; ++i) {
    dsts_[i] = slot(rows_[i]);
    row_dsts_[i] = held_row(rows_[i]);
    for (std::size_t j = 0; j < kk; ++j) coefs_[i * kk + j] = held_row(rows_[i])[cols_[j]];
  }
  for (std::size_t j = 0; j < kk; ++j) {
    srcs_[j] = slot(cols_[j]);
    row_srcs_[j] = held_row(cols_[j]);
  }
  const gf::RegionKernels& k = gf::kernels();
  k.dot_multi(dsts_.data(), m, srcs_.data(), kk, coefs_.data(), len, true);
  k.dot_multi(row_dsts_.data(), m, row_srcs_.data(), kk, coefs_.data(), n, true);
}

// Step 2: the new rows, now zero on the settled pivots, times the inverse of their square part on
// the new pivots: the RREF rows of the new pivots.
void Decoder::solve_new_rows() {
  const std::size_t b = pending_.size(), len = layout_.symbol_size();
  const gf::RegionKernels& k = gf::kernels();
  if (b == 1) {
    const std::size_t c = pending_[0];
    const std::uint8_t a = held_row(c)[c];
    if (a != 1) k.mul(slot(c), slot(c), gf::inv(a), len);
    return;
  }
  // [M | I] with M[i][j] = new row i at new pivot j; Gauss–Jordan turns it into [I | M⁻¹].
  const std::size_t w = 2 * b;
  bool identity = true;
  for (std::size_t i = 0; i < b; ++i) {
    std::uint8_t* row = inverse_.data() + i * w;
    std::fill_n(row, w, std::uint8_t{0});
    for (std::size_t j = 0; j < b; ++j) {
      row[j] = held_row(pending_[i])[pending_[j]];
      identity &= row[j] == (i == j ? 1 : 0);
    }
    row[b + i] = 1;
  }
  if (identity) return;
  for (std::size_t j = 0; j < b; ++j) {
    std::size_t r = j;
    while (inverse_[r * w + j] == 0) ++r;  // M is invertible: every new row was innovative
    if (r != j) std::swap_ranges(inverse_.begin() + static_cast<long>(r * w), inverse_.begin() + static_cast<long>(r * w + w),
                                 inverse_.begin() + static_cast<long>(j * w));
    std::uint8_t* pivot = inverse_.data() + j * w;
    k.mul(pivot, pivot, gf::inv(pivot[j]), w);
    std::size_t m = 0;
    for (std::size_t i = 0; i < b; ++i) {
      const std::uint8_t f = inverse_[i * w + j];
      if (i != j && f != 0) {
        row_dsts_[m] = inverse_.data() + i * w;
        coefs_[m++] = f;
      }
    }
    const std::uint8_t* src = pivot;
    if (m > 0) k.dot_multi(row_dsts_.data(), m, &src, 1, coefs_.data(), w, true);
  }
  for (std::size_t i = 0; i < b; ++i) std::copy_n(inverse_.data() + i * w + b, b, coefs_.data() + i * b);
  // In place over the slots, a column chunk at a time through the scratch copy.
  for (std::size_t off = 0; off < len; off += chunk_len_) {
    const std::size_t width = std::min(chunk_len_, len - off);
    for (std::size_t i = 0; i < b; ++i) {
      std::uint8_t* copy = chunk_.data() + i * chunk_len_;
      std::memcpy(copy, slot(pending_[i]) + off, width);
      srcs_[i] = copy;
      dsts_[i] = slot(pending_[i]) + off;
    }
    k.dot_multi(dsts_.data(), b, srcs_.data(), b, coefs_.data(), width, false);
  }
}

// Step 3: each settled row minus its components along the new rows, now final; the multipliers are
// its entries at the new pivots.
void Decoder::update_settled_rows() {
  const std::size_t b = pending_.size(), len = layout_.symbol_size();
  rows_.clear();
  for (const std::uint16_t p : pivot_order_) {
    if (is_pending_[p]) continue;
    for (const std::uint16_t c : pending_)
      if (held_row(p)[c] != 0) {
        rows_.push_back(p);
        break;
      }
  }
  if (rows_.empty()) return;
  const std::size_t m = rows_.size();
  for (std::size_t i = 0; i < m; ++i) {
    dsts_[i] = slot(rows_[i]);
    for (std::size_t j = 0; j < b; ++j) coefs_[i * b + j] = held_row(rows_[i])[pending_[j]];
  }
  for (std::size_t j = 0; j < b; ++j) srcs_[j] = slot(pending_[j]);
  gf::kernels().dot_multi(dsts_.data(), m, srcs_.data(), b, coefs_.data(), len, true);
}

bool Decoder::row_is_unit(std::size_t c) const {
  const std::uint8_t* row = rref_row(c);
  std::uint8_t other = 0;
  for (std::size_t j = 0; j < c; ++j) other |= row[j];
  for (std::size_t j = c + 1; j < layout_.n(); ++j) other |= row[j];
  return other == 0;
}

bool Decoder::is_decoded(std::size_t i) const {
  if (i >= layout_.n()) return false;
  if (decoded_[i]) return true;
  if (!is_pivot_[i] || !row_is_unit(i)) return false;
  decoded_[i] = 1;
  return true;
}

std::size_t Decoder::decoded_count() const {
  if (complete()) return layout_.n();
  std::size_t count = 0;
  for (std::size_t i = 0; i < layout_.n(); ++i) count += is_decoded(i);
  return count;
}

std::span<const std::uint8_t> Decoder::source_symbol(std::size_t i) {
  if (i >= layout_.n())
    throw Error(Errc::index_out_of_range, "source symbol " + std::to_string(i) + " of n=" + std::to_string(layout_.n()));
  if (!is_decoded(i)) throw Error(Errc::not_decoded, "source symbol " + std::to_string(i) + " is not decoded yet");
  flush();
  return {slot(i), layout_.symbol_size()};
}

std::span<const std::uint8_t> Decoder::data() const {
  if (!complete())
    throw Error(Errc::not_decoded, "generation at rank " + std::to_string(rank_) + " of " + std::to_string(layout_.n()));
  return out_.first(layout_.data_bytes());
}

}  // namespace ncast::rlnc
