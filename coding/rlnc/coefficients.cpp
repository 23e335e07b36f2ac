#include "coding/rlnc/coefficients.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "coding/rlnc/error.hpp"
#include "coding/rlnc/generation.hpp"
#include "coding/rlnc/philox.hpp"

namespace ncast::rlnc {
namespace {

// A non-zero coefficient from the high half of a word: 1 + ⌊h·255 / 65536⌋, within 1/256 of uniform.
std::uint8_t nonzero_value(std::uint32_t word) {
  return static_cast<std::uint8_t>(1 + (((word >> 16) * 255u) >> 16));
}

// Value t of the stream (offset 0) is word t mod 4 of block t/4, whose counter is (t/4, 0, index,
// segment): what CurandPhilox steps through, computed block by block without its state machine.
class Blocks {
 public:
  Blocks(const SeedContext& context, std::uint32_t index)
      : key_{static_cast<std::uint32_t>(context.seed), static_cast<std::uint32_t>(context.seed >> 32)},
        index_(index), segment_(context.segment) {}
  PhiloxCounter operator()(std::uint32_t block) const { return philox4x32_10({block, 0, index_, segment_}, key_); }

 private:
  PhiloxKey key_;
  std::uint32_t index_, segment_;
};

void draw_dense(const Blocks& blocks, std::span<std::uint8_t> out) {
  const std::size_t n = out.size();
  std::uint8_t any = 0;
  for (std::size_t j = 0; j < n; j += 16) {
    const PhiloxCounter words = blocks(static_cast<std::uint32_t>(j / 16));
    for (std::size_t b = 0; b < 16 && j + b < n; ++b) {
      out[j + b] = static_cast<std::uint8_t>(words[b / 4] >> (8 * (b % 4)));
      any |= out[j + b];
    }
  }
  // Probability 2^-8n; the fixed replacement keeps the vector a pure function of its seed.
  if (any == 0) out[0] = 1;
}

void draw_sparse(const Blocks& blocks, std::uint32_t threshold, std::span<std::uint8_t> out) {
  const std::size_t n = out.size();
  // Value j decides coefficient j: present when its low half is below the threshold.
  std::uint32_t words[kMaxSymbols + 4];
  for (std::size_t j = 0; j <= n; j += 4) {
    const PhiloxCounter block = blocks(static_cast<std::uint32_t>(j / 4));
    std::copy(block.begin(), block.end(), words + j);
  }
  bool any = false;
  for (std::size_t j = 0; j < n; ++j) {
    const bool present = (words[j] & 0xFFFF) < threshold;
    out[j] = present ? nonzero_value(words[j]) : 0;
    any |= present;
  }
  if (any) return;
  // None drawn: value n picks one position uniformly, which keeps the value its own word gives it.
  const std::size_t p = ((words[n] & 0xFFFF) * n) >> 16;
  out[p] = nonzero_value(words[p]);
}

}  // namespace

Density Density::from_fraction(double d) {
  if (!(d > 0.0 && d <= 1.0)) throw Error(Errc::bad_density, "density " + std::to_string(d) + " is not in (0, 1]");
  const double steps = std::round(d * 65536.0);
  return Density(static_cast<std::uint32_t>(std::clamp(steps, 1.0, 65536.0)));
}

Density Density::from_threshold(std::uint32_t threshold) {
  if (threshold < 1 || threshold > kDenseThreshold)
    throw Error(Errc::bad_density, "density threshold " + std::to_string(threshold) + " is not in 1..65536");
  return Density(threshold);
}

void draw_coefficients(const SeedContext& context, std::uint32_t index, Density density, std::span<std::uint8_t> out) {
  if (out.empty() || out.size() > kMaxSymbols)
    throw Error(Errc::bad_layout, "a coefficient vector has 1..256 entries, not " + std::to_string(out.size()));
  const Blocks blocks(context, index);
  if (density.is_dense()) draw_dense(blocks, out);
  else draw_sparse(blocks, density.threshold(), out);
}

}  // namespace ncast::rlnc
