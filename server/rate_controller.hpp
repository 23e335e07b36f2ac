#pragma once
// A session's model of its path, from its own packets and the peer's ACKs (docs/streaming.md,
// "Congestion control"): the delivery rate (a windowed maximum, as BBR keeps), the minimum and smoothed
// RTT, the random loss that coding makes up for, and congestion events. It sets a download session's
// pacing rate: BBR's gain cycle over the delivery rate, divided by (1 − random loss) so that loss that
// does not grow with the rate is coded around, and a ceiling that backs off multiplicatively on
// congestion (loss above the random loss, or a queue building up) and grows back additively, as
// TCP does, so that the session shares a bottleneck with TCP instead of taking it. No I/O, no clock
// of its own: the session hands it times.
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

namespace ncast::server {

struct RateControllerConfig {
  double initial_rate = 1.25e6;  // octets per second before the first measurement
  double min_rate = 16e3;        // never below (a probe's rate: also the blackhole rate)
  double max_rate = 1e12;        // the configured caps
  double datagram = 1200;        // a full datagram's octets
};

class RateController {
 public:
  using Clock = std::chrono::steady_clock;
  using TimePoint = Clock::time_point;
  using Duration = std::chrono::microseconds;

  enum class Mode : std::uint8_t { startup, drain, probe_bw };

  RateController(const RateControllerConfig& config, TimePoint now);

  void set_max_rate(double rate) { config_.max_rate = rate; }
  // Packet `number` (numbers increase) of `bytes` octets left now.
  void on_sent(std::uint64_t number, std::size_t bytes, TimePoint now);
  // What an ACK says of the packets just below its largest that may still be on their way, overtaken by
  // later ones: of the last `span` numbers up to the largest (span: how far packets were seen to be
  // reordered), how many arrived. Below them every packet has arrived or is lost.
  struct Recent {
    std::uint64_t span, arrived;
  };
  // An ACK: the largest number received, the peer's count of accepted packets (mod 2^32), how long it
  // held the ACK.
  void on_ack(std::uint64_t largest, std::uint32_t received, Duration ack_delay, TimePoint now,
              Recent recent = Recent{});
  // No ACK for `timeout` while packets were outstanding: the path may be a blackhole. The rate drops to
  // the probe rate until an ACK returns; the model is kept, so the session resumes at its old rate.
  void check_silence(TimePoint now, Duration timeout);

  // Octets per second to pace at: the model's rate within [min_rate, max_rate].
  double pacing_rate() const;
  // In a queue that others keep standing the controller is a window flow, and the window caps the octets
  // in flight: the session is ACK-clocked, as TCP is. A window closed with no ACK or packet for two round
  // trips opens for one packet (a tail probe, as TCP's): the ACKs of the last packets may have been
  // lost, and nothing else would bring one. check_window(now) decides that; the session calls it.
  bool window_open() const;
  void check_window(TimePoint now);
  bool window_mode() const { return window_mode_; }
  // Times the session found a queue others keep standing and became a window flow.
  std::uint64_t window_entries() const { return window_entries_; }
  double window() const { return window_; }
  // The bottleneck's delivery rate as measured (octets per second reaching the peer), 0 before any.
  double delivery_rate() const { return bw_; }
  double random_loss() const { return random_loss_; }
  // Packets the peer has accepted, as its ACKs count them.
  std::uint64_t delivered() const { return delivered_; }
  Duration min_rtt() const { return min_rtt_; }
  Duration srtt() const { return srtt_; }
  bool has_rtt() const { return has_rtt_; }
  Mode mode() const { return mode_; }
  bool silent() const { return silent_; }
  std::uint64_t congestion_events() const { return congestion_events_; }
  // Congestion cuts taken back because reordering deeper than allowed for had caused them.
  std::uint64_t undone_cuts() const { return undone_cuts_; }
  std::uint64_t silences() const { return silences_; }

 private:
  struct Sent {
    std::uint64_t number = 0;
    TimePoint at{};
  };
  struct AckPoint {
    TimePoint at{};
    std::uint64_t delivered = 0;
    TimePoint sent_at{};  // when the packet it named as largest had left
  };
  struct Round {
    std::uint64_t first_number = 0;  // the round ends when an ACK covers it
    TimePoint started{};
    double max_bw = 0;    // the largest delivery-rate sample taken in it
    Duration min_rtt{0};  // the smallest RTT sample in it: above the minimum, a standing queue
    Duration max_rtt{0};  // and the largest
    double gain = 1;      // the pacing gain it was sent at
  };

  void rtt_sample(Duration rtt, TimePoint now);
  void sample_rate(TimePoint sent_at, TimePoint now);
  void start_round(TimePoint now);
  void end_round(TimePoint now);
  // Rounds' loss, counted up to `settled`, a number below which `delivered` packets arrived.
  void count_loss(std::uint64_t settled, std::uint64_t delivered, TimePoint now);
  // Congestion: a round's packets lost more than the random loss by more than chance explains. The
  // RTT decides where random loss is learnt, and how long a round below the rate drains (queue_left).
  bool excess_loss(double loss, std::uint64_t numbers) const;
  bool queue_left(Duration round_min_rtt) const;
  void update_window_mode(double rtt, double round_s, TimePoint now);
  void learn_loss(double loss, std::uint64_t numbers);
  void on_congestion(TimePoint now);
  void reordering_deeper(TimePoint now);
  // How long a congestion cut speaks for its round trip and a round: no second cut within it, and within
  // it the cut may be taken back.
  Duration cut_window() const;
  void advance_mode(double round_bw, TimePoint now);
  double gain() const;
  // The share of the packets sent that random loss lets through, as far as the rate makes up for it.
  double delivered_share() const;
  double srtt_seconds() const;
  void grow_sent();

  RateControllerConfig config_;
  double datagram_;         // the mean size of the packets sent, octets
  std::vector<Sent> sent_;  // a ring by packet number, grown to hold those above the largest acknowledged
  std::uint64_t delivered_ = 0;
  std::uint32_t last_received_ = 0;
  bool has_ack_ = false;
  std::uint64_t largest_acked_ = 0, largest_sent_ = 0;
  TimePoint last_ack_at_, last_sent_at_;

  // Where each round's packets begin, to judge their loss by the ACKs that cover them.
  struct Mark {
    std::uint64_t first_number = 0;
    double gain = 1;
    bool startup = false;
  };
  struct Judged {
    bool valid = false;
    std::uint64_t settled = 0, delivered = 0;  // when the round's first packet was first settled
    double gain = 1;
    bool startup = false;
    Duration min_rtt{0};  // the smallest RTT sample since
  };
  std::deque<Mark> marks_;
  Judged judged_;
  std::deque<AckPoint> acks_;  // the last kRateSpan and a little of ACKs, for rate samples
  Round round_;
  std::array<double, 10> bw_rounds_{};  // the per-round maxima of the last ten rounds
  std::size_t rounds_ = 0;
  double bw_ = 0;

  Duration min_rtt_{0}, srtt_{0}, base_rtt_{0};
  TimePoint min_rtt_at_{}, base_rtt_at_{};
  bool has_rtt_ = false;

  static constexpr std::size_t kLossSamples = 16;
  std::array<double, kLossSamples> loss_samples_{};
  std::array<std::uint64_t, kLossSamples> loss_sizes_{};  // the packets each sample counted
  std::uint64_t loss_packets_ = 0;                        // and all the kept samples together
  std::size_t loss_count_ = 0;
  double random_loss_ = 0;
  bool loss_known_ = false;
  double ceiling_ = 0;  // octets per second; 0: none yet (no congestion seen)
  // The window mode (update_window_mode): in a queue that others keep standing, after congestion.
  bool others_queue_ = false;  // a standing queue that rounds below the rate did not drain
  bool window_mode_ = false;
  int queue_free_rounds_ = 0;  // rounds in a row that found no queue standing
  std::uint64_t window_entries_ = 0;
  double window_ = 0;  // octets in flight allowed, in the window mode
  bool tail_probe_ = false;
  // Since the window mode began, the largest and smallest RTT of each of the last rounds: the queue's swing.
  std::array<Duration, 64> max_rtts_{};
  std::array<Duration, 64> min_rtts_{};
  TimePoint last_congestion_{};
  std::uint64_t congestion_events_ = 0, silences_ = 0, undone_cuts_ = 0;
  // The model before the last congestion cut, to take it back if its loss proves to be reordering.
  struct BeforeCut {
    bool valid = false;
    double ceiling = 0;
    std::array<double, 10> bw_rounds{};
    Mode mode = Mode::startup;
  };
  BeforeCut before_cut_;
  std::uint64_t reorder_span_ = 0;  // the deepest reordering span an ACK came with

  Mode mode_ = Mode::startup;
  double startup_best_ = 0;
  int startup_flat_rounds_ = 0;
  std::size_t cycle_ = 0;
  int drain_rounds_ = 0;
  bool silent_ = false;
};

}  // namespace ncast::server
