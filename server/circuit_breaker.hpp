#pragma once
// A paced session's circuit breaker, in the spirit of RFC 8083: the media cannot be sent slower than
// its bitrate, so when the path does not carry it the session first backs off (no headroom, and no more
// redundancy for loss that making up for did not cure) and, if the path still carries too little for
// several intervals in a row, it ends (BYE "path too slow"). An interval counts against the path when
// the session sent at least the media rate and the peer received less than the media needs, once what
// it received is scaled up to the session's pacing schedule where the session sent less than that
// schedule (its server's thread was busy: not the path's doing). A session with nothing to send is not
// judged.
#include <chrono>
#include <cstdint>
#include <optional>

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

  // Octets so far: sent, received by the peer, and what the session's pacing rate allowed while it had
  // something to send (the rate integrated over that time, whether the server's thread kept up or not).
  struct Totals {
    double sent = 0, delivered = 0, scheduled = 0;
  };
  // When an interval in which the session was judged ended now: whether the path carried the stream.
  std::optional<bool> update(TimePoint now, const Totals& totals);
  void set_media_rate(double rate) { config_.media_rate = rate; }
  // The last interval was bad: the session backs off.
  bool congested() const { return bad_ > 0; }
  // Bad intervals in a row.
  int bad_in_row() const { return bad_; }
  bool tripped() const { return tripped_; }
  // Octets per second the peer received over the bad intervals, and what the media needs.
  double measured() const { return bad_ > 0 ? bad_delivered_ / bad_seconds_ : 0; }
  double needed() const { return config_.media_rate; }
  std::uint64_t bad_intervals() const { return bad_total_; }

 private:
  CircuitBreakerConfig config_;
  TimePoint started_;
  Totals at_start_;
  int bad_ = 0;
  bool tripped_ = false;
  double bad_delivered_ = 0, bad_seconds_ = 0;
  std::uint64_t bad_total_ = 0;
};

}  // namespace ncast::server
