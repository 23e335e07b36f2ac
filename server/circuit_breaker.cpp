#include "server/circuit_breaker.hpp"

namespace ncast::server {
namespace {

// The peer received less than this share of the media rate: the path does not carry the stream.
constexpr double kCarried = 0.9;
// The session sent at least this share of its pacing rate: it was limited by the path, not the source.
constexpr double kBusy = 0.7;

}  // namespace

void CircuitBreaker::update(TimePoint now, double sent, double delivered, double pacing_rate) {
  const double seconds = std::chrono::duration<double>(now - started_).count();
  if (config_.media_rate <= 0 || seconds < std::chrono::duration<double>(config_.interval).count()) return;
  const double sent_rate = (sent - sent_at_start_) / seconds;
  const double got_rate = (delivered - delivered_at_start_) / seconds;
  if (sent_rate >= kBusy * pacing_rate && got_rate < kCarried * config_.media_rate) {
    if (bad_ == 0) bad_delivered_ = bad_seconds_ = 0;
    ++bad_;
    ++bad_total_;
    bad_delivered_ += delivered - delivered_at_start_;
    bad_seconds_ += seconds;
  } else {
    bad_ = 0;
  }
  started_ = now;
  sent_at_start_ = sent;
  delivered_at_start_ = delivered;
}

}  // namespace ncast::server
