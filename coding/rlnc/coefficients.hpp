#pragma once
// Seeded coding coefficients: the vector of a coded symbol is a pure function of (server id, stream
// id, segment, coded-symbol index, density), drawn from Philox4x32-10 exactly as cuRAND's
// curand_init + curand() draw it, so a coded symbol needs only those few numbers on the wire and the
// CPU and CUDA backends agree bit for bit. docs/coefficients.md is the normative description;
// tests/data/rlnc_coefficients_kat.txt holds known answers for both backends.
#include <cstdint>
#include <span>

namespace ncast::rlnc {

// The cuRAND seed: one Philox key per (server, stream). Distinct pairs give distinct keys, so
// independent servers never draw from the same stream.
constexpr std::uint64_t coefficient_seed(std::uint32_t server_id, std::uint32_t stream_id) {
  return (std::uint64_t{server_id} << 32) | stream_id;
}

// The cuRAND subsequence: one per (segment, coded-symbol index); each is 2^66 values long, so the
// vectors of different symbols never share a Philox block.
constexpr std::uint64_t coefficient_subsequence(std::uint32_t segment, std::uint32_t index) {
  return (std::uint64_t{segment} << 32) | index;
}

// The fraction of non-zero coefficients, in steps of 1/65536. Dense (the default) draws every byte
// uniformly from GF(2^8); sparse makes each coefficient non-zero with probability threshold/65536
// and then uniform over the 255 non-zero values.
class Density {
 public:
  static constexpr std::uint32_t kDenseThreshold = 65536;

  constexpr Density() = default;
  static constexpr Density dense() { return {}; }
  // d in (0, 1], rounded to the nearest step (at least one step); Error(bad_density) otherwise.
  static Density from_fraction(double d);
  // threshold in 1..65536; Error(bad_density) otherwise.
  static Density from_threshold(std::uint32_t threshold);

  std::uint32_t threshold() const { return threshold_; }
  bool is_dense() const { return threshold_ == kDenseThreshold; }
  double fraction() const { return threshold_ / 65536.0; }
  bool operator==(const Density&) const = default;

 private:
  explicit constexpr Density(std::uint32_t threshold) : threshold_(threshold) {}
  std::uint32_t threshold_ = kDenseThreshold;
};

// Where a generation's seeded vectors come from: the seed of its (server, stream) and its segment.
struct SeedContext {
  std::uint64_t seed = 0;
  std::uint32_t segment = 0;
};

// Writes the coefficient vector of coded symbol `index` (one byte per source symbol, out.size() =
// n in 1..256). Never all zero.
void draw_coefficients(const SeedContext& context, std::uint32_t index, Density density, std::span<std::uint8_t> out);

}  // namespace ncast::rlnc
