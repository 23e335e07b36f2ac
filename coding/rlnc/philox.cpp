#include "coding/rlnc/philox.hpp"

#include "coding/rlnc/philox_avx512.hpp"
#include "coding/simd_level.hpp"

namespace ncast::rlnc {
namespace {

constexpr std::uint32_t kW0 = 0x9E3779B9, kW1 = 0xBB67AE85;  // key bumps: golden ratio, sqrt(3) - 1
constexpr std::uint32_t kM0 = 0xD2511F53, kM1 = 0xCD9E8D57;  // round multipliers

PhiloxCounter round(const PhiloxCounter& c, const PhiloxKey& k) {
  const std::uint64_t p0 = std::uint64_t{kM0} * c[0];
  const std::uint64_t p1 = std::uint64_t{kM1} * c[2];
  const auto hi0 = static_cast<std::uint32_t>(p0 >> 32), lo0 = static_cast<std::uint32_t>(p0);
  const auto hi1 = static_cast<std::uint32_t>(p1 >> 32), lo1 = static_cast<std::uint32_t>(p1);
  return {hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0};
}

}  // namespace

PhiloxCounter philox4x32_10(PhiloxCounter counter, PhiloxKey key) {
  for (int r = 0; r < 9; ++r) {
    counter = round(counter, key);
    key[0] += kW0;
    key[1] += kW1;
  }
  return round(counter, key);
}

void philox4x32_10_blocks(PhiloxCounter counter, PhiloxKey key, std::size_t count, std::uint32_t* out) {
  static const bool wide = gf::active_level() == gf::Level::avx512_gfni;
  // The sixteen lanes run their ten dependent rounds whatever the count; below four blocks the scalar
  // rounds, independent from block to block, finish first (AMD VM, TSC cycles a call: 1 block 30
  // against 129, 2 blocks 58 against 127, 4 blocks 118 against 128): a dense vector of n <= 48.
  if (wide && count >= 4) {
    detail::philox4x32_10_blocks_avx512(counter, key, count, out);
    return;
  }
  for (std::size_t i = 0; i < count; ++i) {
    const PhiloxCounter block =
        philox4x32_10({counter[0] + static_cast<std::uint32_t>(i), counter[1], counter[2], counter[3]}, key);
    for (int w = 0; w < 4; ++w) out[4 * i + w] = block[w];
  }
}

// The stepping below follows curand_kernel.h and curand_philox4x32_x.h line for line, carries
// included, so that even counters near 2^64 step as cuRAND steps them.

CurandPhilox::CurandPhilox(std::uint64_t seed, std::uint64_t subsequence, std::uint64_t offset)
    : key_{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32)} {
  skipahead_sequence(subsequence);
  skipahead(offset);
}

std::uint32_t CurandPhilox::operator()() {
  const std::uint32_t value = output_[state_++];
  if (state_ == 4) {
    increment();
    output_ = philox4x32_10(ctr_, key_);
    state_ = 0;
  }
  return value;
}

void CurandPhilox::skipahead(std::uint64_t n) {
  state_ += static_cast<unsigned>(n & 3);
  n /= 4;
  if (state_ > 3) {
    n += 1;
    state_ -= 4;
  }
  add_to_low(n);
  output_ = philox4x32_10(ctr_, key_);
}

void CurandPhilox::skipahead_sequence(std::uint64_t n) {
  // Philox_State_Incr_hi: add n to z, carry into w.
  const auto lo = static_cast<std::uint32_t>(n);
  auto hi = static_cast<std::uint32_t>(n >> 32);
  ctr_[2] += lo;
  if (ctr_[2] < lo) ++hi;
  ctr_[3] += hi;
  output_ = philox4x32_10(ctr_, key_);
}

void CurandPhilox::add_to_low(std::uint64_t n) {
  const auto lo = static_cast<std::uint32_t>(n);
  auto hi = static_cast<std::uint32_t>(n >> 32);
  ctr_[0] += lo;
  if (ctr_[0] < lo) ++hi;
  ctr_[1] += hi;
  if (hi <= ctr_[1]) return;
  if (++ctr_[2]) return;
  ++ctr_[3];
}

void CurandPhilox::increment() {
  if (++ctr_[0]) return;
  if (++ctr_[1]) return;
  if (++ctr_[2]) return;
  ++ctr_[3];
}

}  // namespace ncast::rlnc
