#pragma once
// The receiving side of one stream, whatever server each symbol came from: the stream's parameters
// (fixed by the first manifest, checked against every later one), its segment table, a progressive
// decoder per segment in the window, SHA-256 verification of every decoded segment, and in-order output.
//
// Sources that lie are caught and ignored (pollution.hpp); wire symbols become codec symbols in
// wire_symbol.hpp.
//
// Decoding goes through the SegmentDecoder seam (CPU, or GPU when the peer asks for it). A relay keeps
// decoded segments to recode from, within a byte budget: the oldest are evicted beyond it.
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "coding/rlnc/decoder.hpp"
#include "peer/origin_trust.hpp"
#include "peer/pollution.hpp"
#include "peer/sealed_table.hpp"
#include "peer/segment_decoder.hpp"
#include "protocol/packets.hpp"

namespace ncast::peer {

using Clock = std::chrono::steady_clock;
using TimePoint = Clock::time_point;

struct StreamParams {
  std::string name;
  std::uint32_t stream_id = 0;
  std::uint16_t n = 0;
  std::uint32_t symbol_size = 0;
  std::uint64_t bitrate = 0;
  bool live = false;
  std::uint32_t start_segment = 0;
};

struct ReceiverStats {
  std::uint64_t symbols = 0;  // CODED packets accepted for a known segment
  std::uint64_t innovative = 0;
  std::uint64_t non_innovative = 0;  // linearly dependent on what was held
  std::uint64_t after_decode = 0;    // for a segment already decoded
  std::uint64_t out_of_window = 0;   // for a segment outside the window
  std::uint64_t rejected = 0;        // refused by the decoder (corrupt)
  std::uint64_t hash_failures = 0;   // decoded segments whose SHA-256 did not match
  std::uint64_t recovered = 0;       // segments that failed and then verified
  std::uint64_t from_polluters = 0;  // ignored: their source was caught polluting
  std::uint64_t held_back = 0;       // ignored while a failed segment was decoded from one source alone
  std::uint64_t segments_written = 0, bytes_written = 0;
  std::uint64_t symbols_needed = 0;  // Σ n_s of the segments written
  std::uint64_t skipped = 0;         // segments a live server dropped before they were received
  std::uint64_t stalls = 0;
  double stall_seconds = 0;
  // Every wait of the player for a segment, short ones too: the time the stream came slower than its
  // bitrate (a server lost and its share not yet taken over), which short waits alone never show.
  double below_bitrate_seconds = 0;
  // A relay's decoded segments kept to recode from: bytes now, at most, and segments evicted.
  std::uint64_t kept_bytes = 0, kept_peak_bytes = 0, evicted = 0;
};

class StreamReceiver {
 public:
  struct Options {
    std::uint16_t window = 8;
    bool keep_segments = false;  // a relay keeps decoded segments to recode from them
    std::chrono::milliseconds stall_threshold{500};
    // With keep_segments: the decoded segments kept, counted as their n·L octets plus their n×n
    // coefficient rows, stay within this; the oldest are evicted first.
    std::uint64_t keep_bytes = std::uint64_t{64} << 20;
    std::optional<proto::PublicKey> origin_key = std::nullopt;  // pinned (--origin-key): the only origin trusted
  };
  // Each segment's bytes, in order; empty for a segment of a counting decoder (counting_decoder.hpp),
  // which has none: its size is descriptor(next_needed()).size.
  using Writer = std::function<void(std::span<const std::uint8_t>)>;

  // decoders: how segments are decoded (the CPU decoder unless given).
  StreamReceiver(Options options, Writer write, std::shared_ptr<DecoderFactory> decoders = make_cpu_decoder_factory());

  // The first manifest fixes the stream; a later one (another server, a rejoin) must describe the same
  // stream. Returns why not, or an empty string.
  std::string adopt(const proto::ManifestBody& manifest);
  bool adopted() const { return adopted_; }
  const StreamParams& params() const { return params_; }

  // Descriptors; false (nothing changed) when one contradicts what is known.
  bool on_segments(const proto::SegmentsBody& body, TimePoint now = Clock::now());
  // A SEGMENTS batch from a session whose certificate names `origin` (trusted): taken only when the
  // origin sealed it. ahead: it starts beyond what is known (the server resends from our `known`).
  enum class Sealed : std::uint8_t { accepted, forged, contradicts, ahead };
  Sealed on_sealed_segments(const proto::SegmentsBody& body, const proto::PublicKey& origin,
                            TimePoint now = Clock::now());
  OriginTrust& origins() { return origins_; }
  const OriginTrust& origins() const { return origins_; }
  // The chain and the origin's certificate and seals, as a relay forwards them.
  const SealedTable& table() const { return table_; }
  std::uint32_t known() const { return static_cast<std::uint32_t>(descriptors_.size()); }
  // When the segment's descriptor arrived: from then on the server had the segment.
  TimePoint known_at(std::uint32_t segment) const { return known_at_.at(segment); }
  const proto::SegmentDescriptor& descriptor(std::uint32_t segment) const { return descriptors_.at(segment); }
  std::optional<std::size_t> symbols_of(std::uint32_t segment) const;
  // A CODED body read against its segment's symbol count: truncated when it is too short to name its
  // segment, unexpected when that segment is not known yet.
  proto::Parsed<proto::CodedView> read_coded(std::span<const std::uint8_t> body) const;
  bool final_seen() const { return final_seen_; }

  // full_rank: innovative, and the segment's last: a batched decoder now solves it (completed follows).
  // rejected: corrupt, or it completed a segment that failed its SHA-256; ignored: its source was
  // caught polluting, or a failed segment is being decoded from another source alone.
  enum class Result : std::uint8_t {
    innovative,
    full_rank,
    completed,
    non_innovative,
    after_decode,
    out_of_window,
    rejected,
    ignored
  };
  // A CODED body from server_id's session, as read_coded() reads it. With a batched
  // decoder a segment's last innovative symbol leaves it decoding (full_rank); settle_decoded()
  // completes it once its data has come, and symbols for it meanwhile count as after_decode.
  Result on_symbol(const proto::CodedView& symbol, std::uint32_t server_id, TimePoint now);
  // Verifies and writes the segments whose batched decode has finished (as on_symbol does on
  // completion); returns how many completed.
  std::size_t settle_decoded(TimePoint now);
  // Whether some segment is at full rank and its batched decode not yet settled.
  bool decoding() const;

  std::uint32_t next_needed() const { return next_write_; }
  // Every segment wanted is written: the stream is final and all of it is decoded.
  bool complete() const { return final_seen_ && next_write_ >= descriptors_.size() && adopted_; }
  // Segments the peer knows of and still waits for.
  bool expecting_data() const { return next_write_ < descriptors_.size(); }
  std::vector<proto::AckEntry> ack_entries() const;
  // The same into out (cleared first): an ACK sent every 16 packets reuses one vector.
  void ack_entries(std::vector<proto::AckEntry>& out) const;
  std::uint32_t window() const { return options_.window; }

  // Rank held of a segment (n_s once decoded). The CPU decoder holding its rows, which a relay
  // recodes from: null when the segment is not held (not begun, or decoded and not kept or evicted),
  // or is being decoded on the GPU (a relay then serves it once it has verified).
  std::size_t rank(std::uint32_t segment) const;
  const rlnc::Decoder* decoder(std::uint32_t segment) const;
  const DecoderFactory& decoders() const { return *decoders_; }

  const ReceiverStats& stats() const { return stats_; }
  // Every source caught polluting, by server id; and those caught since the last call.
  const std::map<std::uint32_t, Polluter>& polluters() const { return pollution_.polluters(); }
  std::vector<std::uint32_t> take_new_polluters() { return pollution_.take_new_polluters(); }
  std::optional<TimePoint> first_segment_at() const { return first_segment_at_; }
  // Ends a pending stall measurement (at the end of the run).
  void finish(TimePoint now);

 private:
  struct Slot {
    std::unique_ptr<SegmentDecoder> decoder;
    bool decoded = false;
    bool decoding = false;  // full rank, its data still being decoded (a batched decoder)
    SegmentEvidence evidence;
  };
  Slot* slot_for(std::uint32_t segment);
  // Why a symbol for this segment goes no further than counting (nullopt: it goes to the decoder).
  std::optional<Result> screen(std::uint32_t segment, std::uint32_t server_id);
  // Into the segment's decoder, kept as evidence when innovative.
  Result add_symbol(Slot& slot, const proto::CodedView& symbol, std::uint32_t server_id, TimePoint now);
  // The output waited for the next segment until now: a stall when longer than the threshold.
  void count_stall(TimePoint now);
  // How long a player takes to play this many octets at the stream's bitrate (zero when unknown).
  Clock::duration play_time(std::size_t bytes) const;
  void write_ready(TimePoint now);
  bool verifies(std::uint32_t segment, SegmentDecoder& decoder) const;
  // A relay's kept segments: counted when written, the oldest evicted beyond the budget.
  void keep_within_budget();
  static std::uint64_t footprint(const Slot& slot);
  // The segment's decoder is complete: verified and written, or started over; or left decoding
  // until its data comes (innovative).
  Result settle(Slot& slot, std::uint32_t segment, TimePoint now);

  Options options_;
  Writer write_;
  std::shared_ptr<DecoderFactory> decoders_;  // before slots_: outlives their decoders
  bool adopted_ = false, final_seen_ = false;
  StreamParams params_;
  std::vector<proto::SegmentDescriptor> descriptors_;
  std::vector<TimePoint> known_at_;
  std::map<std::uint32_t, Slot> slots_;
  std::uint32_t next_write_ = 0;
  std::vector<std::uint8_t> coefficients_;
  ReceiverStats stats_;
  PollutionGuard pollution_;
  OriginTrust origins_;
  SealedTable table_;
  std::optional<TimePoint> first_segment_at_;
  // A stall is a wait for a segment the server has, beyond the threshold, by a player that plays each
  // segment for its length at the bitrate: the wait runs from when the player has played the segment
  // before it (or, for a live segment made later, from when its descriptor arrived).
  TimePoint waiting_since_{};
  TimePoint played_until_{};
  bool waiting_ = false;
};

}  // namespace ncast::peer
