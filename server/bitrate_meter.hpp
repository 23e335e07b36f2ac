#pragma once
// A live source's bitrate as it arrives: the octets of a moving window of arrivals over the time they
// span. Arrivals close together are merged, so memory stays small however fast the source is fed.
#include <chrono>
#include <cstdint>
#include <deque>

namespace ncast::server {

class BitrateMeter {
 public:
  using Clock = std::chrono::steady_clock;

  // window: how far back arrivals count; min_span: no estimate until the arrivals span this long.
  explicit BitrateMeter(Clock::duration window = std::chrono::seconds(10),
                        Clock::duration min_span = std::chrono::seconds(2))
      : window_(window), min_span_(min_span) {}

  void add(Clock::time_point at, std::uint64_t bytes);
  // bit/s, 0 while the arrivals span less than min_span.
  std::uint64_t bitrate() const;

 private:
  struct Arrival {
    Clock::time_point at;
    std::uint64_t bytes;
  };
  Clock::duration window_, min_span_;
  std::deque<Arrival> arrivals_;
  std::uint64_t bytes_ = 0;  // Σ bytes of arrivals_
};

}  // namespace ncast::server
