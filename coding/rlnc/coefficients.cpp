#include "coding/rlnc/coefficients.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <string>

#include "coding/rlnc/error.hpp"
#include "coding/rlnc/generation.hpp"
#include "coding/rlnc/philox.hpp"

namespace ncast::rlnc {
namespace {

// A non-zero coefficient from the high half of a word: 1 + ⌊h·255 / 65536⌋, within 1/256 of uniform.
std::uint8_t nonzero_value(std::uint32_t word) { return static_cast<std::uint8_t>(1 + (((word >> 16) * 255u) >> 16)); }

// Value t of a symbol's stream (offset 0) is word t mod 4 of block t/4, whose counter is (t/4, 0,
// index, segment): what CurandPhilox steps through, for all the values a vector needs at once.
struct Values {
  Values(const SeedContext& context, std::uint32_t index, std::size_t count) {
    philox4x32_10_blocks({0, 0, index, context.segment},
                         {static_cast<std::uint32_t>(context.seed), static_cast<std::uint32_t>(context.seed >> 32)},
                         (count + 3) / 4, words);
  }
  std::uint32_t words[kMaxSymbols + 4];
};

void draw_dense(const SeedContext& context, std::uint32_t index, std::span<std::uint8_t> out) {
  const std::size_t n = out.size();
  const Values values(context, index, (n + 3) / 4);
  // Coefficient j is byte j mod 4 (least significant first) of value j/4: the values' own bytes in
  // order, on a little-endian machine.
  static_assert(std::endian::native == std::endian::little);
  std::uint8_t* c = out.data();
  std::memcpy(c, values.words, n);
  std::uint8_t any = 0;
  for (std::size_t j = 0; j < n; ++j) any |= c[j];
  // Probability 2^-8n; the fixed replacement keeps the vector a pure function of its seed.
  if (any == 0) c[0] = 1;
}

void draw_sparse(const SeedContext& context, std::uint32_t index, std::uint32_t threshold,
                 std::span<std::uint8_t> out) {
  const std::size_t n = out.size();
  // Value j decides coefficient j: present when its low half is below the threshold. Value n comes
  // with them, for the case where none is.
  const Values values(context, index, n + 1);
  const std::uint32_t* v = values.words;
  bool any = false;
  for (std::size_t j = 0; j < n; ++j) {
    const bool present = (v[j] & 0xFFFF) < threshold;
    out[j] = present ? nonzero_value(v[j]) : 0;
    any |= present;
  }
  if (any) return;
  // None drawn: value n picks one position uniformly, which keeps the value its own word gives it.
  const std::size_t p = ((v[n] & 0xFFFF) * n) >> 16;
  out[p] = nonzero_value(v[p]);
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
  if (density.is_dense()) draw_dense(context, index, out);
  else draw_sparse(context, index, density.threshold(), out);
}

}  // namespace ncast::rlnc
