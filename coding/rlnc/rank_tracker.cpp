#include "coding/rlnc/rank_tracker.hpp"

#include <algorithm>
#include <string>

#include "coding/gf256.hpp"
#include "coding/region.hpp"
#include "coding/rlnc/error.hpp"

namespace ncast::rlnc {

RankTracker::RankTracker(std::size_t n) : n_(n) {
  if (n < 1 || n > kMaxSymbols)
    throw Error(Errc::bad_option, "rank tracker of " + std::to_string(n) + " symbols: n must be 1..256");
  rows_.assign(n * n, 0);
  units_.reserve(n);
  dense_.reserve(n);
  work_.assign(n, 0);
  factors_.assign(n, 0);
  srcs_.resize(n);
  dsts_.resize(n);
}

void RankTracker::reset() {
  units_.clear();
  dense_.clear();
  rank_ = 0;
}

AddResult RankTracker::add(std::span<const std::uint8_t> coefficients) {
  if (coefficients.size() != n_)
    throw Error(Errc::wrong_coefficient_count, "a coefficient vector of " + std::to_string(coefficients.size()) +
                                                   " octets, the generation has " + std::to_string(n_) + " symbols");
  if (complete()) return AddResult::non_innovative;
  const gf::RegionKernels& k = gf::kernels();
  std::uint8_t* v = work_.data();
  std::copy(coefficients.begin(), coefficients.end(), v);

  // Clear every pivot column of v at once (reduced rows do not disturb each other's pivots): a unit
  // row clears its own column only, the others in one multiply-accumulate.
  for (const std::uint16_t p : units_) v[p] = 0;
  std::size_t used = 0;
  for (const std::uint16_t p : dense_) {
    if (v[p] == 0) continue;
    srcs_[used] = row(p);
    factors_[used++] = v[p];
  }
  if (used > 0) k.dot_multi(&v, 1, srcs_.data(), used, factors_.data(), n_, true);

  const auto first = std::find_if(v, v + n_, [](std::uint8_t x) { return x != 0; });
  if (first == v + n_) return AddResult::non_innovative;
  const auto c = static_cast<std::size_t>(first - v);
  ++rank_;
  const bool unit = std::none_of(first + 1, v + n_, [](std::uint8_t x) { return x != 0; });

  // The new row, normalised, then cleared from the column c of the dense rows (the unit rows are 0
  // there). A unit row is its pivot alone: nothing to store, and clearing it is setting c to 0.
  std::uint8_t* new_row = row(c);
  if (!unit) k.mul(new_row, v, gf::inv(v[c]), n_);
  used = 0;
  for (const std::uint16_t p : dense_) {
    std::uint8_t* other = row(p);
    if (other[c] == 0) continue;
    if (unit) {
      other[c] = 0;
      continue;
    }
    dsts_[used] = other;
    factors_[used++] = other[c];
  }
  const std::uint8_t* src = new_row;
  if (used > 0) k.dot_multi(dsts_.data(), used, &src, 1, factors_.data(), n_, true);
  (unit ? units_ : dense_).push_back(static_cast<std::uint16_t>(c));
  return AddResult::innovative;
}

}  // namespace ncast::rlnc
