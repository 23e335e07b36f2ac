#pragma once
// The rank of a generation from its coefficient vectors alone: incremental Gauss–Jordan over GF(2^8)
// on rows of n octets, with no payload. What a receiver needs to acknowledge truthfully (rank,
// innovation, completion) without decoding: a simulated peer that only loads its server, or a
// decoder that leaves the payloads to someone else.
//
// Rows are kept in reduced form by pivot column (1 on the pivot, 0 on every other pivot column), so
// an arriving vector is cleared of every pivot in one multiply-accumulate whose multipliers are its own
// entries there. Rows that are unit vectors (source symbols, mostly) are neither stored nor read: a
// source symbol costs no field arithmetic and touches only the rows of coded symbols.
// Every buffer is allocated by the constructor; add() allocates nothing.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "coding/rlnc/decoder.hpp"

namespace ncast::rlnc {

class RankTracker {
 public:
  // n: the generation's source symbols, 1..256; Error(bad_option) otherwise.
  explicit RankTracker(std::size_t n);

  // One coefficient vector over the n source symbols (exactly n octets; Error(wrong_coefficient_count)
  // otherwise). Innovative when it raises the rank; a zero vector, a combination of what is held, or
  // anything at full rank is not.
  AddResult add(std::span<const std::uint8_t> coefficients);
  void reset();

  std::size_t n() const { return n_; }
  std::size_t rank() const { return rank_; }
  bool complete() const { return rank_ == n_; }

 private:
  std::uint8_t* row(std::size_t c) { return rows_.data() + c * n_; }

  std::size_t n_;
  std::vector<std::uint8_t> rows_;  // n × n: row c is the reduced row whose pivot is column c
  // The pivot columns whose row is the unit vector there (not stored), and the others.
  std::vector<std::uint16_t> units_, dense_;
  std::size_t rank_ = 0;

  // Scratch, sized once.
  std::vector<std::uint8_t> work_, factors_;
  std::vector<const std::uint8_t*> srcs_;
  std::vector<std::uint8_t*> dsts_;
};

}  // namespace ncast::rlnc
