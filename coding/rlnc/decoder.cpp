#include "coding/rlnc/decoder.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "coding/gf256.hpp"
#include "coding/region.hpp"
#include "coding/rlnc/error.hpp"

namespace ncast::rlnc {

Decoder::Decoder(const GenerationLayout& layout, std::span<std::uint8_t> out, const SeedContext& seeds,
                 const DecoderOptions& options)
    : layout_(layout), out_(out), seeds_(seeds), batch_(options.batch) {
  const std::size_t n = layout.n();
  if (batch_ < 1 || batch_ > kMaxSymbols)
    throw Error(Errc::bad_option, "decoder batch " + std::to_string(batch_) + " is not in 1..256");
  if (out.size() < layout.block_bytes())
    throw Error(Errc::buffer_too_small, "output buffer of " + std::to_string(out.size()) +
                                            " bytes, the generation needs " + std::to_string(layout.block_bytes()));
  stride_ = (n + batch_ + 63) / 64 * 64;
  rows_.assign(n * stride_, 0);
  const std::size_t lines = (layout.symbol_size() + kHostAlignment - 1) / kHostAlignment;
  staging_stride_ = (lines | 1) * kHostAlignment;
  staging_ = allocate_host(Backend::cpu, batch_ * staging_stride_);
  raw_rows_.assign(batch_ * stride_, 0);
  is_pivot_.assign(n, 0);
  is_pending_.assign(n, 0);
  unit_.assign(n, 0);
  decoded_.assign(n, 0);
  pivot_order_.reserve(n);
  pending_.reserve(batch_);
  active_.reserve(n);
  units_.reserve(n);
  raw_.assign(stride_, 0);
  any_.assign(stride_, 0);
  work_.assign(stride_, 0);
  probe_.assign(stride_, 0);
  coefs_.assign(batch_ * (batch_ + n), 0);
  fcoefs_.assign(batch_ * n, 0);
  gcoefs_.assign(batch_ * n, 0);
  probe_coefs_.assign(batch_, 0);
  srcs_.resize(batch_ + n);
  row_srcs_.resize(n);
  probe_srcs_.resize(batch_);
  dsts_.resize(n);
  row_dsts_.resize(n);
  cols_.reserve(n);
  touched_.reserve(n);
}

void Decoder::reset() {
  std::fill(is_pivot_.begin(), is_pivot_.end(), 0);
  std::fill(is_pending_.begin(), is_pending_.end(), 0);
  std::fill(unit_.begin(), unit_.end(), 0);
  std::fill(decoded_.begin(), decoded_.end(), 0);
  pivot_order_.clear();
  pending_.clear();
  active_.clear();
  units_.clear();
  lo_ = 0;
  rank_ = received_ = non_innovative_ = 0;
}

// Clears the settled pivot columns in one multiply-accumulate: the settled rows are the unit vectors on
// those columns, so the multipliers are the raw entries there. Decoded rows only clear their own column.
// (Byte stores may alias anything, so the loops work through local pointers, not members.)
void Decoder::clear_settled_columns(std::uint8_t* v, std::size_t lo, std::size_t width) {
  const std::uint8_t* raw = raw_.data();
  std::uint8_t* rows = rows_.data();
  const std::size_t stride = stride_;
  const std::uint8_t** srcs = srcs_.data();
  std::uint8_t* coefs = coefs_.data();
  std::size_t used = 0;
  for (const std::uint16_t p : active_) {
    const std::uint8_t f = raw[p];
    if (f == 0) continue;
    srcs[used] = rows + p * stride + lo;
    coefs[used++] = f;
  }
  for (const std::uint16_t p : units_)
    if (p >= lo) v[p - lo] = 0;
  if (used > 0) gf::kernels().dot_multi(&v, 1, srcs, used, coefs, width, true);
}

// Clears the pending pivot columns of v, whose transform part (at column n) records how the result
// combines the pending rows: one product over both, as the pending rows carry theirs alike.
void Decoder::clear_pending_columns(std::uint8_t* v, std::size_t lo, std::size_t width) {
  const std::size_t b = pending_.size();
  std::uint8_t* t = v + (layout_.n() - lo);
  std::fill_n(t, batch_, std::uint8_t{0});
  t[b] = 1;
  std::uint8_t* rows = rows_.data();
  const std::size_t stride = stride_;
  const std::uint16_t* pending = pending_.data();
  const std::uint8_t** srcs = srcs_.data();
  std::uint8_t* coefs = coefs_.data();
  std::size_t used = 0;
  for (std::size_t i = 0; i < b; ++i) {
    const std::uint8_t f = v[pending[i] - lo];
    if (f == 0) continue;
    srcs[used] = rows + pending[i] * stride + lo;
    coefs[used++] = f;
  }
  if (used > 0) gf::kernels().dot_multi(&v, 1, srcs, used, coefs, width + b + 1, true);
}

// Clears the new pivot column c from the other pending rows, transform parts included. The new row is
// zero before c (every column there is a pivot it was cleared of, or was zero), so the work starts at c.
void Decoder::clear_from_pending_rows(std::size_t c) {
  const std::size_t b = pending_.size(), n = layout_.n();
  std::uint8_t* rows = rows_.data();
  const std::size_t stride = stride_;
  const std::uint16_t* pending = pending_.data();
  std::uint8_t** dsts = row_dsts_.data();
  std::uint8_t* coefs = coefs_.data();
  std::size_t used = 0;
  for (std::size_t i = 0; i < b; ++i) {
    std::uint8_t* other = rows + pending[i] * stride;
    const std::uint8_t f = other[c];
    if (f == 0) continue;
    dsts[used] = other + c;
    coefs[used++] = f;
  }
  const std::uint8_t* src = row(c) + c;
  if (used > 0) gf::kernels().dot_multi(dsts, used, &src, 1, coefs, n - c + b + 1, true);
}

AddResult Decoder::add(const SymbolView& symbol) {
  const std::size_t n = layout_.n();
  resolve_coefficients(symbol, layout_, seeds_, {raw_.data(), n});
  ++received_;
  if (complete()) {
    ++non_innovative_;
    return AddResult::non_innovative;
  }
  const std::size_t lo = lo_, width = n - lo;
  std::uint8_t* v = work_.data() + lo;  // v[j - lo] is column j
  std::copy(raw_.begin() + static_cast<long>(lo), raw_.begin() + static_cast<long>(n), v);
  clear_settled_columns(v, lo, width);
  const std::size_t b = pending_.size();
  clear_pending_columns(v, lo, width);

  std::size_t c = 0;
  while (c < width && v[c] == 0) ++c;
  if (c == width) {
    ++non_innovative_;
    return AddResult::non_innovative;
  }
  c += lo;

  // The new row, normalised (its whole transform part, so that no stale entry stays beyond b), then
  // cleared from the column of the other pending rows.
  gf::kernels().mul(row(c) + lo, v, gf::inv(v[c - lo]), width + batch_);
  clear_from_pending_rows(c);

  // The payload waits, raw, with its raw coefficients, until the batch is flushed.
  std::memcpy(staged(b), symbol.payload.data(), layout_.symbol_size());
  std::copy_n(raw_.data(), n, raw_row(b));
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
  settle_new_rows();
  // Every column below the new lo_ is a pivot, where the reduced rows are known (0, or 1 on the
  // diagonal): the settled rows' coefficients are updated, and read, only from there on.
  while (lo_ < layout_.n() && is_pivot_[lo_]) ++lo_;
  update_settled_rows();
  for (const std::uint16_t p : touched_) unit_[p] = unit_from(row(p), p);
  for (const std::uint16_t c : pending_) {
    unit_[c] = unit_from(row(c), c);
    is_pending_[c] = 0;
  }
  pending_.clear();
  active_.clear();
  units_.clear();
  for (const std::uint16_t p : pivot_order_) (unit_[p] ? units_ : active_).push_back(p);
}

// Whether the pending pivots are consecutive columns in order, as dense coding makes them: their
// entries in a row are then one run of bytes.
bool Decoder::pending_is_run() const {
  for (std::size_t i = 1; i < pending_.size(); ++i)
    if (pending_[i] != pending_[0] + i) return false;
  return true;
}

// Step 1: the new rows into their slots. Cleared of the settled rows, pending payload b is
// raw_b + Σ_p raw_b[p]·slot p over the settled pivots p (the settled rows are the unit vectors there),
// and the transform T takes those to the reduced rows, so new row c = Σ_b T[c][b]·(raw_b +
// Σ_p raw_b[p]·slot p): one product from the staged payloads and the settled slots.
void Decoder::settle_new_rows() {
  const std::size_t n = layout_.n(), b = pending_.size(), len = layout_.symbol_size();
  const gf::RegionKernels& k = gf::kernels();
  // The settled columns that some pending row uses, in increasing order.
  std::uint8_t* any = any_.data();
  std::fill_n(any, n, std::uint8_t{0});
  for (std::size_t i = 0; i < b; ++i) {
    const std::uint8_t* raw = raw_row(i);
    for (std::size_t j = 0; j < n; ++j) any[j] |= raw[j];
  }
  cols_.clear();
  for (std::size_t p = 0; p < n; ++p)
    if (any[p] != 0 && is_pivot_[p] && !is_pending_[p]) cols_.push_back(static_cast<std::uint16_t>(p));
  const std::size_t kk = cols_.size();
  bool identity = true;
  for (std::size_t i = 0; i < b && identity; ++i)
    for (std::size_t j = 0; j < b; ++j) identity &= transform_row(i)[j] == (i == j ? 1 : 0);
  if (identity && kk == 0) {
    for (std::size_t i = 0; i < b; ++i) std::memcpy(slot(pending_[i]), staged(i), len);
    return;
  }
  // F[b][j] = raw_b[cols_j]; G = T·F; the product's coefficients are [T | G], row by row.
  const bool run = kk > 0 && cols_.back() - cols_.front() + 1u == kk;
  const std::uint16_t* cols = cols_.data();
  for (std::size_t i = 0; i < b; ++i) {
    const std::uint8_t* raw = raw_row(i);
    std::uint8_t* f = fcoefs_.data() + i * kk;
    if (run) std::copy_n(raw + cols[0], kk, f);
    else
      for (std::size_t j = 0; j < kk; ++j) f[j] = raw[cols[j]];
    srcs_[i] = fcoefs_.data() + i * kk;
    dsts_[i] = gcoefs_.data() + i * kk;
  }
  for (std::size_t i = 0; i < b; ++i) std::copy_n(transform_row(i), b, coefs_.data() + i * b);
  k.dot_multi(dsts_.data(), b, srcs_.data(), b, coefs_.data(), kk, false);
  const std::size_t width = b + kk;
  for (std::size_t i = 0; i < b; ++i) {
    std::copy_n(transform_row(i), b, coefs_.data() + i * width);
    std::copy_n(gcoefs_.data() + i * kk, kk, coefs_.data() + i * width + b);
    dsts_[i] = slot(pending_[i]);
    srcs_[i] = staged(i);
  }
  for (std::size_t j = 0; j < kk; ++j) srcs_[b + j] = slot(cols_[j]);
  k.dot_multi(dsts_.data(), b, srcs_.data(), width, coefs_.data(), len, false);
}

// Step 2: each settled row minus its components along the new rows, now final; the multipliers are
// its entries at the new pivots. Payloads and coefficient rows alike.
void Decoder::update_settled_rows() {
  const std::size_t b = pending_.size(), lo = lo_, width = layout_.n() - lo;
  touched_.clear();
  const bool run = pending_is_run();
  const std::uint16_t* pending = pending_.data();
  std::uint8_t* u = coefs_.data();
  for (const std::uint16_t p : active_) {  // a decoded row is zero at every other column
    const std::uint8_t* r = row(p);
    std::uint8_t any = 0;
    if (run) std::copy_n(r + pending[0], b, u);
    else
      for (std::size_t j = 0; j < b; ++j) u[j] = r[pending[j]];
    for (std::size_t j = 0; j < b; ++j) any |= u[j];
    if (any != 0) {
      touched_.push_back(p);
      u += b;
    }
  }
  if (touched_.empty()) return;
  const std::size_t m = touched_.size();
  for (std::size_t i = 0; i < m; ++i) {
    dsts_[i] = slot(touched_[i]);
    row_dsts_[i] = row(touched_[i]) + lo;
  }
  for (std::size_t j = 0; j < b; ++j) {
    srcs_[j] = slot(pending_[j]);
    row_srcs_[j] = row(pending_[j]) + lo;
  }
  const gf::RegionKernels& k = gf::kernels();
  k.dot_multi(dsts_.data(), m, srcs_.data(), b, coefs_.data(), layout_.symbol_size(), true);
  k.dot_multi(row_dsts_.data(), m, row_srcs_.data(), b, coefs_.data(), width, true);
}

// Whether r (a row with pivot c, significant from lo_ on) is zero at every column but c. Columns
// below lo_ are zero by construction; what a buffer holds there is stale and must not be read.
bool Decoder::unit_from(const std::uint8_t* r, std::size_t c) const {
  std::uint8_t other = 0;
  for (std::size_t j = lo_; j < c; ++j) other |= r[j];
  for (std::size_t j = std::max(c + 1, lo_); j < layout_.n(); ++j) other |= r[j];
  return other == 0;
}

bool Decoder::is_decoded(std::size_t i) const {
  if (i >= layout_.n()) return false;
  if (decoded_[i]) return true;
  if (!is_pivot_[i]) return false;
  bool unit = unit_[i] != 0;
  if (is_pending_[i]) {
    unit = unit_from(row(i), i);  // pending rows are already in their final form
  } else if (!unit && !pending_.empty()) {
    // A settled row as it will be after the flush: minus its components along the pending rows.
    const std::size_t lo = lo_, width = layout_.n() - lo;
    std::size_t used = 0;
    for (const std::uint16_t c : pending_)
      if (row(i)[c] != 0) {
        probe_srcs_[used] = row(c) + lo;
        probe_coefs_[used++] = row(i)[c];
      }
    if (used > 0) {
      std::uint8_t* probe = probe_.data() + lo;
      std::copy_n(row(i) + lo, width, probe);
      gf::kernels().dot_multi(&probe, 1, probe_srcs_.data(), used, probe_coefs_.data(), width, true);
      unit = unit_from(probe_.data(), i);
    }
  }
  if (unit) decoded_[i] = 1;
  return unit;
}

std::size_t Decoder::decoded_count() const {
  if (complete()) return layout_.n();
  std::size_t count = 0;
  for (std::size_t i = 0; i < layout_.n(); ++i) count += is_decoded(i);
  return count;
}

std::span<const std::uint8_t> Decoder::source_symbol(std::size_t i) {
  if (i >= layout_.n())
    throw Error(Errc::index_out_of_range,
                "source symbol " + std::to_string(i) + " of n=" + std::to_string(layout_.n()));
  if (!is_decoded(i)) throw Error(Errc::not_decoded, "source symbol " + std::to_string(i) + " is not decoded yet");
  flush();
  return {slot(i), layout_.symbol_size()};
}

std::span<const std::uint8_t> Decoder::data() const {
  if (!complete())
    throw Error(Errc::not_decoded,
                "generation at rank " + std::to_string(rank_) + " of " + std::to_string(layout_.n()));
  return out_.first(layout_.data_bytes());
}

void Decoder::combine_held(const std::uint8_t* mix, std::size_t count, std::uint8_t* const* payloads,
                           std::uint8_t* coefficients) const {
  const std::size_t n = layout_.n(), r = rank_, b = pending_.size(), settled = r - b, lo = lo_;
  if (r == 0) throw Error(Errc::nothing_to_recode, "nothing is held yet");
  const gf::RegionKernels& k = gf::kernels();
  // Held row h is pivot_order_[h]; the pending ones are the last b, held as raw payloads with their
  // raw coefficients.
  const std::size_t len = layout_.symbol_size();
  held_srcs_.resize(r);
  held_dsts_.resize(count);
  const std::uint8_t** srcs = held_srcs_.data();
  std::uint8_t** outs = held_dsts_.data();
  for (std::size_t h = 0; h < r; ++h) srcs[h] = h < settled ? slot(pivot_order_[h]) : staged(h - settled);
  k.dot_multi(payloads, count, srcs, r, mix, len, false);
  // Coefficients from lo on: every held row is known there.
  for (std::size_t h = 0; h < r; ++h) srcs[h] = (h < settled ? row(pivot_order_[h]) : raw_row(h - settled)) + lo;
  for (std::size_t i = 0; i < count; ++i) outs[i] = coefficients + i * n + lo;
  k.dot_multi(outs, count, srcs, r, mix, n - lo, false);
  if (lo == 0) return;
  // Below lo, settled rows are unit vectors on their own pivot; pending rows have their raw entries.
  pending_mix_.resize(count * b);
  for (std::size_t i = 0; i < count; ++i) {
    std::copy_n(mix + i * r + settled, b, pending_mix_.data() + i * b);
    outs[i] = coefficients + i * n;
  }
  for (std::size_t j = 0; j < b; ++j) srcs[j] = raw_row(j);
  k.dot_multi(outs, count, srcs, b, pending_mix_.data(), lo, false);
  for (std::size_t h = 0; h < settled; ++h) {
    const std::size_t p = pivot_order_[h];
    if (p >= lo) continue;
    for (std::size_t i = 0; i < count; ++i) coefficients[i * n + p] ^= mix[i * r + h];
  }
}

}  // namespace ncast::rlnc
