#pragma once
// Pollution: a server or relay may send well-formed symbols whose payloads lie. Such a segment fails
// its SHA-256 and is never written. To tell which source lied, the innovative symbols of each segment
// are kept (with their coefficients) until it verifies. After a failure they are set aside as evidence
// and the segment is decoded again from one source alone (the one that sent most, starting from its
// evidence). A source whose symbols alone decode to wrong data, or whose evidence contradicts the
// segment once it verifies (each piece encoded again from the verified data, through the codec), is a
// proven polluter: it is reported and its symbols are ignored from then on. The SHA-256 of the segment
// descriptors is the trusted reference.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "peer/segment_decoder.hpp"

namespace ncast::peer {

// A source caught sending symbols that contradict a segment's SHA-256.
struct Polluter {
  std::uint32_t server_id = 0;
  std::uint32_t segment = 0;      // where it was first caught
  std::uint64_t bad_symbols = 0;  // its symbols proven wrong against verified segments
  std::uint64_t segments = 0;     // segments it was caught on
};

// Symbols kept as rows of n_s coefficients over the source symbols followed by the L payload octets,
// each with the server id it came from.
struct Rows {
  std::vector<std::uint8_t> bytes;
  std::vector<std::uint32_t> sources;
  void add(std::span<const std::uint8_t> coefficients, std::span<const std::uint8_t> payload, std::uint32_t source);
  void clear() { bytes.clear(), sources.clear(); }
};

// One segment's symbols as evidence.
struct SegmentEvidence {
  Rows kept;                               // the innovative symbols of the current attempt
  Rows failed;                             // those of attempts that failed their SHA-256
  std::optional<std::uint32_t> only_from;  // after a failure: decode from this source alone
  std::uint64_t held_back = 0;             // symbols of others ignored meanwhile
};

class PollutionGuard {
 public:
  bool convicted(std::uint32_t server_id) const { return polluters_.contains(server_id); }
  const std::map<std::uint32_t, Polluter>& polluters() const { return polluters_; }
  std::vector<std::uint32_t> take_new_polluters() { return std::exchange(new_polluters_, {}); }

  // Whether a symbol from server_id is to be ignored while the segment is decoded from another source
  // alone: for a bounded number of symbols, so that should the one source fall silent, the others are
  // heard again.
  bool hold_back(SegmentEvidence& segment, std::uint32_t server_id, std::size_t n_s);
  // The completed segment failed its SHA-256: convicts its only source, if it had one, keeps the
  // symbols as evidence (a bounded amount) and starts the decoder over with decode_alone().
  void on_hash_failure(SegmentEvidence& evidence, SegmentDecoder& decoder, std::uint32_t segment,
                       std::size_t symbol_size);
  // Starts the decoder over from the evidence of the source not yet convicted that sent the most
  // (hearing it alone from then on), or from nothing.
  void decode_alone(SegmentEvidence& evidence, SegmentDecoder& decoder, std::size_t symbol_size) const;
  // The segment verified: convicts the sources of evidence that its data contradicts. Returns whether
  // there was evidence (the segment had failed before).
  bool convict_from_evidence(SegmentEvidence& evidence, SegmentDecoder& decoder, std::uint32_t segment);

 private:
  void convict(std::uint32_t server_id, std::uint32_t segment, std::uint64_t bad_symbols);

  std::map<std::uint32_t, Polluter> polluters_;
  std::vector<std::uint32_t> new_polluters_;
};

}  // namespace ncast::peer
