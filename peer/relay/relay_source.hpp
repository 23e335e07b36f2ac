#pragma once
// What a relaying peer offers downstream: the stream as far as it has received it, as recoded symbols
// (docs/coefficients.md section 3). Rank grows as symbols arrive from upstream, so a relay forwards
// useful combinations long before it could decode a segment itself.
#include <cstdint>
#include <map>
#include <memory>

#include "coding/rlnc/recoder.hpp"
#include "peer/relay/forwarded_seals.hpp"
#include "peer/stream_receiver.hpp"
#include "server/symbol_source.hpp"

namespace ncast::peer {

class RelaySource final : public server::SymbolSource {
 public:
  // The receiver must have adopted its stream and keep its segments.
  RelaySource(const StreamReceiver& receiver, std::uint32_t relay_id);

  const server::StreamInfo& info() const override { return info_; }
  std::uint32_t segment_count() const override { return receiver_.known(); }
  bool final() const override { return receiver_.final_seen(); }
  // The relay knows no keyframes: where it started itself is the newest start it knows is clean.
  std::uint32_t live_edge() const override { return receiver_.params().start_segment; }
  const proto::SegmentDescriptor& descriptor(std::uint32_t segment) const override {
    return receiver_.descriptor(segment);
  }
  // What can be recoded: the rank of the rows held in host memory (none once evicted).
  std::size_t rank(std::uint32_t segment) const override {
    const rlnc::Decoder* node = receiver_.decoder(segment);
    return node ? node->rank() : 0;
  }
  bool can_send_systematic() const override { return false; }
  bool write_systematic(std::uint32_t, std::uint32_t, proto::Writer&) override { return false; }
  bool write_coded(std::uint32_t segment, std::uint32_t j, proto::Writer& w) override;
  bool coded_symbols_repeat() const override { return false; }
  // The origin's certificate and seals, as received: a relay signs nothing of the table.
  server::TableSeals* forwarded_seals() override { return &seals_; }

  std::uint64_t recoded() const { return recoded_; }

 private:
  const StreamReceiver& receiver_;
  server::StreamInfo info_;
  ForwardedSeals seals_{receiver_};
  // Per segment, the node its recoder draws from: a recoder whose node is gone (evicted, or replaced)
  // is dropped.
  struct Recoding {
    const rlnc::Decoder* node;
    std::unique_ptr<rlnc::Recoder> recoder;
  };
  std::map<std::uint32_t, Recoding> recoders_;
  std::uint64_t recoded_ = 0;
};

}  // namespace ncast::peer
