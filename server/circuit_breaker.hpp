#pragma once
// A paced session's circuit breaker, in the spirit of RFC 8083: the media cannot be sent slower than
// its bitrate, so when the path does not carry it the session first backs off (no headroom, and no more
// redundancy for loss that making up for did not cure) and, if the path still carries too little for
// several intervals in a row, it ends (BYE "path too slow"). An interval counts against the path when
// the session sent at least the media rate and the path would carry less than the media needs at the
// session's pacing rate, which makes up for the loss the session measures: the share of the packets
// the interval's ACKs covered that arrived, applied to that rate (or to what was sent, when more), in
// the interval and on average over the last few (a second's sample of bursty loss falls short by chance).
// Random loss is thus judged by what making up for it delivers, whatever the session sent meanwhile
// (its loss estimate still converging, its server's thread behind, its ACKs read late), and congestion
// by what the queue let through. A session with nothing to send is not judged.
// Once congestion has been seen the session no longer makes up for its new loss (Session::paced_rate),
// so for a while each interval must carry the whole stream, not nine tenths of it: less stalls the
// player. A path short on average stays bad until its average recovers, whatever a good second between.
#include <chrono>
#include <cstdint>
#include <optional>

namespace ncast::server {

struct CircuitBreakerConfig {
  double media_rate = 0;  // octets per second of datagrams that carry the stream at its bitrate
  std::chrono::milliseconds interval{1000};
  // After this many bad intervals (since the path last carried the stream on average) a session may
  // trip; after max_bad it does. In between it trips at random with the probability of its shortfall
  // (1 − received / needed): the sessions of one overloaded path do not all leave at once (the path
  // would then carry nothing) nor one at a time (the others would starve meanwhile), but about as many
  // as the path cannot carry, in a second or two. With 10, sessions short by a tenth beside a TCP flow
  // drew their way through 7-9 bad seconds in the bed's overload case, stalling all the while.
  int min_bad = 2;
  int max_bad = 6;
  std::uint64_t seed = 0;  // the session's own draw (its id)
};

class CircuitBreaker {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;

  CircuitBreaker(const CircuitBreakerConfig& config, TimePoint now) : config_(config), started_(now) {}

  // So far: octets sent; packets sent up to the largest the peer acknowledged, and of those, received
  // by the peer (any unit, the same for both).
  struct Totals {
    double sent = 0, acked = 0, delivered = 0;
  };
  // Between two totals `seconds` apart, sending at `rate` octets per second: what was sent per second,
  // the packets the ACKs covered, and octets per second the path carried at that rate.
  struct Carried {
    double sent_rate = 0, acked = 0, carried = 0;
  };
  static Carried between(const Totals& from, const Totals& to, double seconds, double rate);
  // When an interval in which the session was judged ended now: whether the path carried the stream.
  // `rate`: octets per second the session's pacing asks for now.
  std::optional<bool> update(TimePoint now, const Totals& totals, double rate);
  void set_media_rate(double rate) { config_.media_rate = rate; }
  // The last interval was bad: the session backs off.
  bool congested() const { return bad_ > 0; }
  // A bad interval among the last few judged ones: the loss the session measures now may be the queue's.
  bool congested_lately() const { return bad_total_ > 0 && judged_ - last_bad_ <= kCalm; }
  // The last judged interval carried the stream calmly: neither the session's first nor after a bad one
  // lately. The loss the session measures then is its path's own, and making up for it is no harm.
  bool carried_calmly() const { return carried_ && judged_ >= 2 && !congested_lately(); }
  // Bad intervals since the path last carried the stream on average.
  int bad_in_row() const { return bad_; }
  bool tripped() const { return tripped_; }
  // Ends the session now: its path, shared with older sessions, carries only `carried` octets per second
  // of each stream (beyond_shared_path).
  void trip(double carried) {
    tripped_ = true;
    shared_carried_ = carried;
  }
  // Other sessions on its path were ended so that it keeps its stream: it is not ended for what it was
  // short before, and backs off no longer (its player has a deficit to make up, which the media rate
  // alone never would). The path's average stays, so a path still short is found so at once. Left
  // backing off and drawing its end while its average recovered, some of the bed's overload survivors
  // stalled and others were ended after the shed: 3 of 5 runs passed (8 of 10 restarted).
  void restart() { bad_ = 0; }
  bool judged() const { return judged_ > 0; }
  // Octets per second the path carried at the pacing rate over the bad intervals (or, ended with the
  // sessions it shares its path with, for each of them), and what the media needs.
  double measured() const {
    if (shared_carried_ >= 0) return shared_carried_;
    return bad_ > 0 ? bad_carried_ / bad_seconds_ : 0;
  }
  double needed() const { return config_.media_rate; }
  std::uint64_t bad_intervals() const { return bad_total_; }

 private:
  CircuitBreakerConfig config_;
  TimePoint started_;
  Totals at_start_;
  // What the path carried at the pacing rate as a share of the media rate, a moving average over judged
  // intervals; a path is presumed to carry the stream until shown otherwise.
  double average_ = 1.0;
  // Judged intervals after a bad one that still count as congested lately.
  static constexpr std::uint64_t kCalm = 8;
  int bad_ = 0;
  bool carried_ = false;  // the last judged interval carried what it needed to
  bool tripped_ = false;
  double bad_carried_ = 0, bad_seconds_ = 0;
  double shared_carried_ = -1;  // set when ended with its shared path's sessions
  std::uint64_t bad_total_ = 0;
  std::uint64_t judged_ = 0, last_bad_ = 0;  // judged intervals so far, and their count at the last bad one
};

}  // namespace ncast::server
