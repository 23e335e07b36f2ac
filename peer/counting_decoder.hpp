#pragma once
// A segment "decoder" that only counts: it tracks the rank exactly from each symbol's coefficients
// (rlnc::RankTracker: seeded vectors drawn as the CPU decoder draws them, explicit and recoded ones as
// carried, a source symbol's unit vector) and does no payload arithmetic, keeps no payload and has no
// data to verify. A simulated peer that only loads its servers (ncast-swarm --verify-fraction) decodes
// through it: its ranks, innovation counts and ACKs are those of a decoding peer, and its segments are
// complete at full rank. Not for a relay, which recodes from the data.
#include <memory>

#include "peer/segment_decoder.hpp"

namespace ncast::peer {

std::unique_ptr<DecoderFactory> make_counting_decoder_factory();

}  // namespace ncast::peer
