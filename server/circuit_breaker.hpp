#pragma once
// A paced session's circuit breaker, in the spirit of RFC 8083: the media cannot be sent slower than
// its bitrate, so when the path does not carry it the session first backs off (no headroom, no more
// redundancy for the loss that the queue causes) and, if the path still carries too little for
// several intervals in a row, it ends (BYE "path too slow"). An interval counts against the path only
// when the session sent enough to carry the media through the path's random loss and the peer received
// less than the media needs: loss beyond the random loss, which more redundancy would only add to. A
// session with nothing to send is not judged.
#include <chrono>
#include <cstdint>

namespace ncast::server {

struct CircuitBreakerConfig {
  double media_rate = 0;  // octets per second of datagrams that carry the stream at its bitrate
  std::chrono::milliseconds interval{1000};
  // After this many bad intervals in a row a session may trip; after max_bad it does. In between it
  // trips at random with the probability of its shortfall (1 − received / needed): the sessions of
  // one overloaded path do not all leave at once (the path would then carry nothing) nor one at a time
  // (the others would starve meanwhile), but about as many as the path cannot carry, in a second or two.
  int min_bad = 2;
  int max_bad = 10;
  std::uint64_t seed = 0;  // the session's own draw (its id)
};

class CircuitBreaker {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;

  CircuitBreaker(const CircuitBreakerConfig& config, TimePoint now) : config_(config), started_(now) {}

  // Totals so far: octets sent, octets the peer received; the path's random loss as estimated (loss
  // that does not grow with the rate). True when an interval ended now and the path carried the stream
  // through it.
  bool update(TimePoint now, double sent, double delivered, double random_loss);
  void set_media_rate(double rate) { config_.media_rate = rate; }
  // The last interval was bad: the session backs off.
  bool congested() const { return bad_ > 0; }
  bool tripped() const { return tripped_; }
  // Octets per second the peer received over the bad intervals, and what the media needs.
  double measured() const { return bad_ > 0 ? bad_delivered_ / bad_seconds_ : 0; }
  double needed() const { return config_.media_rate; }
  std::uint64_t bad_intervals() const { return bad_total_; }

 private:
  CircuitBreakerConfig config_;
  TimePoint started_;
  double sent_at_start_ = 0, delivered_at_start_ = 0;
  int bad_ = 0;
  bool tripped_ = false;
  double bad_delivered_ = 0, bad_seconds_ = 0;
  std::uint64_t bad_total_ = 0;
};

}  // namespace ncast::server
