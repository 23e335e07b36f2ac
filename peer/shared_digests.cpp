#include "peer/shared_digests.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

namespace ncast::peer {

SharedDigests::SharedDigests(std::size_t slots) : slots_(std::bit_ceil(std::max<std::size_t>(slots, 1))) {}

std::size_t SharedDigests::slot_of(std::span<const std::uint8_t> shared) const {
  // The first and last 16 octets: the coded header's start (the sealing nonce) and the tag.
  std::uint64_t w[4] = {};
  const std::size_t n = std::min<std::size_t>(shared.size(), 16);
  std::memcpy(w, shared.data(), n);
  std::memcpy(w + 2, shared.data() + shared.size() - n, n);
  std::uint64_t h = (w[0] ^ (w[1] * 0x9E3779B97F4A7C15ull) ^ (w[2] * 0xC2B2AE3D27D4EB4Full) ^ w[3]) + shared.size();
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 32;
  return static_cast<std::size_t>(h) & (slots_.size() - 1);
}

proto::Sha256Digest SharedDigests::digest(std::span<const std::uint8_t> shared) {
  Slot& s = slots_[slot_of(shared)];
  if (s.octets.size() == shared.size() && std::equal(shared.begin(), shared.end(), s.octets.begin())) {
    ++hits_;
    return s.digest;
  }
  ++misses_;
  s.octets.assign(shared.begin(), shared.end());
  s.digest = proto::sha256(shared);
  return s.digest;
}

}  // namespace ncast::peer
