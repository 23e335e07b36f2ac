#include "server/circuit_breaker.hpp"

namespace ncast::server {
namespace {

// The peer received less than this share of the media rate: the path does not carry the stream.
constexpr double kCarried = 0.9;
// The session sent at least this share of the media rate: had the path carried it, the peer would have
// had the stream. One that sent less was held back by the peer's needs or its own rounds, not by the
// path (ncast-soak's loopback peers at 10 % loss sent about 0.9 of it; judged against their pacing rate,
// 70 % of it, they were taken for failing paths and ended).
constexpr double kBusy = 0.95;

// A uniform number in [0, 1) from the session's seed and the interval's count (splitmix64).
double draw(std::uint64_t seed, std::uint64_t n) {
  std::uint64_t z = seed + (n + 1) * 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-53;
}

}  // namespace

bool CircuitBreaker::update(TimePoint now, double sent, double delivered) {
  const double seconds = std::chrono::duration<double>(now - started_).count();
  if (config_.media_rate <= 0 || tripped_ || seconds < std::chrono::duration<double>(config_.interval).count())
    return false;
  const double sent_rate = (sent - sent_at_start_) / seconds;
  const double got_rate = (delivered - delivered_at_start_) / seconds;
  if (sent_rate >= kBusy * config_.media_rate && got_rate < kCarried * config_.media_rate) {
    if (bad_ == 0) bad_delivered_ = bad_seconds_ = 0;
    ++bad_;
    ++bad_total_;
    bad_delivered_ += delivered - delivered_at_start_;
    bad_seconds_ += seconds;
    const double shortfall = 1.0 - got_rate / config_.media_rate;
    tripped_ = bad_ >= config_.max_bad || (bad_ >= config_.min_bad && draw(config_.seed, bad_total_) < shortfall);
  } else {
    bad_ = 0;
  }
  started_ = now;
  sent_at_start_ = sent;
  delivered_at_start_ = delivered;
  return bad_ == 0;
}

}  // namespace ncast::server
