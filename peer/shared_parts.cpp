#include "peer/shared_parts.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

#include "protocol/coded_seal.hpp"

namespace ncast::peer {

SharedParts::SharedParts(std::size_t slots) : slots_(std::bit_ceil(std::max<std::size_t>(slots, 1))) {}

std::size_t SharedParts::slot_of(std::span<const std::uint8_t> shared) const {
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

bool SharedParts::holds(const Slot& s, std::span<const std::uint8_t> shared) const {
  return s.octets.size() == shared.size() && std::equal(shared.begin(), shared.end(), s.octets.begin());
}

proto::Sha256Digest SharedParts::digest(std::span<const std::uint8_t> shared) {
  Slot& s = slots_[slot_of(shared)];
  digested_ = shared;
  if (holds(s, shared)) {
    ++hits_;
    return s.digest;
  }
  ++misses_;
  s.octets.assign(shared.begin(), shared.end());
  s.digest = proto::sha256(shared);
  s.opened.clear();
  return s.digest;
}

std::optional<std::span<const std::uint8_t>> SharedParts::open(std::span<std::uint8_t> shared,
                                                               std::span<const std::uint8_t> key, proto::Aead& stream) {
  Slot& s = slots_[slot_of(shared)];
  // Opened in place, the octets no longer match the slot: whether they did is decided first.
  const bool just_digested = digested_.data() == shared.data() && digested_.size() == shared.size();
  digested_ = {};
  if (!just_digested && !holds(s, shared)) return proto::open_shared(stream, shared);
  const bool same_key = !s.opened.empty() && s.opened_suite == stream.suite() &&
                        std::equal(key.begin(), key.end(), s.opened_key.begin(), s.opened_key.end());
  if (same_key) {
    ++opens_reused_;
    std::memcpy(shared.data(), s.opened.data(), s.opened.size());
    return shared.first(s.opened.size());
  }
  const auto body = proto::open_shared(stream, shared);
  if (!body) return body;
  s.opened.assign(body->begin(), body->end());
  s.opened_key.assign(key.begin(), key.end());
  s.opened_suite = stream.suite();
  return body;
}

}  // namespace ncast::peer
