#include "server/circuit_breaker.hpp"

#include <algorithm>

namespace ncast::server {
namespace {

// The peer received less than this share of the media rate: the path does not carry the stream.
constexpr double kCarried = 0.9;
// The session sent enough to carry the media through the path's random loss: at least this share of the
// media rate once that loss is taken off. Had the path carried what it was sent, the peer would have had
// the stream; one that sent less was held back by the peer's needs, its own rounds or a busy server, not
// by the path. Judged on what it sent alone, 189 of 10,000 realtime peers at 30 % random loss, whose
// server could not keep up, were ended as "path too slow", and loopback peers at 10 % loss too.
constexpr double kBusy = 0.95;
// As the pacing rate: at most half the datagrams are made up for.
constexpr double kMaxRandomLoss = 0.5;

// A uniform number in [0, 1) from the session's seed and the interval's count (splitmix64).
double draw(std::uint64_t seed, std::uint64_t n) {
  std::uint64_t z = seed + (n + 1) * 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-53;
}

}  // namespace

bool CircuitBreaker::update(TimePoint now, double sent, double delivered, double random_loss) {
  const double seconds = std::chrono::duration<double>(now - started_).count();
  if (config_.media_rate <= 0 || tripped_ || seconds < std::chrono::duration<double>(config_.interval).count())
    return false;
  const double sent_rate = (sent - sent_at_start_) / seconds;
  const double got_rate = (delivered - delivered_at_start_) / seconds;
  // A path that loses more at random than a session makes up for cannot carry the stream however much
  // it is sent: a session that sent at least the media rate into it is judged too (one that sent less,
  // such as a peer caught up with a live source, is not).
  const bool sent_enough = sent_rate * (1.0 - std::min(random_loss, kMaxRandomLoss)) >= kBusy * config_.media_rate;
  const bool hopeless = random_loss > kMaxRandomLoss && sent_rate >= kBusy * config_.media_rate;
  if ((sent_enough || hopeless) && got_rate < kCarried * config_.media_rate) {
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
