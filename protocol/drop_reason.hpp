#pragma once
// Why a datagram was dropped (docs/protocol.md section 8). Both ends count every drop under one of
// these, so an operator can tell an attack from a bug from a lossy path.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ncast::proto {

enum class DropReason : std::uint8_t {
  truncated,
  oversized,
  bad_magic,
  bad_version,
  bad_type,
  malformed,
  bad_token,
  unknown_session,
  wrong_address,
  auth,
  replay,
  rate_limited,
  unexpected,
};
inline constexpr std::size_t kDropReasonCount = 13;

std::string_view to_string(DropReason reason);

// One counter per reason.
class DropCounters {
 public:
  void count(DropReason reason) { counts_[static_cast<std::size_t>(reason)] += 1; }
  std::uint64_t operator[](DropReason reason) const { return counts_[static_cast<std::size_t>(reason)]; }
  DropCounters& operator+=(const DropCounters& other) {
    for (std::size_t i = 0; i < kDropReasonCount; ++i) counts_[i] += other.counts_[i];
    return *this;
  }
  std::uint64_t total() const {
    std::uint64_t t = 0;
    for (auto c : counts_) t += c;
    return t;
  }

 private:
  std::array<std::uint64_t, kDropReasonCount> counts_{};
};

}  // namespace ncast::proto
