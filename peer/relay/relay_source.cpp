#include "peer/relay/relay_source.hpp"

#include "coding/rlnc/coefficients.hpp"

namespace ncast::peer {

RelaySource::RelaySource(const StreamReceiver& receiver, std::uint32_t relay_id) : receiver_(receiver) {
  const StreamParams& p = receiver.params();
  info_.name = p.name;
  info_.stream_id = p.stream_id;
  info_.server_id = relay_id;
  info_.n = p.n;
  info_.symbol_size = p.symbol_size;
  info_.bitrate = p.bitrate;
  info_.live = p.live;
}

bool RelaySource::write_coded(std::uint32_t segment, std::uint32_t, proto::Writer& w) {
  const rlnc::Decoder* node = receiver_.decoder(segment);
  // The index numbers the relay's symbols: with segment and kind it is the stream key's nonce, so it
  // never repeats (docs/protocol.md section 6); past 2^32 symbols the relay stops.
  if (!node || node->rank() == 0 || recoded_ > 0xFFFFFFFF) return false;
  auto it = recoders_.find(segment);
  if (it == recoders_.end() || it->second.node != node) {
    // A new recoder (rarely: once per segment) is the time to forget those of segments let go.
    std::erase_if(recoders_, [&](const auto& r) { return receiver_.decoder(r.first) != r.second.node; });
    // Every call makes a fresh combination, so the ordinal j that an encoder uses is not needed.
    const rlnc::SeedContext seeds{rlnc::coefficient_seed(info_.server_id, info_.stream_id), segment};
    it = recoders_.insert_or_assign(segment, Recoding{node, std::make_unique<rlnc::Recoder>(*node, seeds)}).first;
  }
  rlnc::Recoder* recoder = it->second.recoder.get();
  const std::size_t n_s = node->layout().n();
  proto::write_coded_header(
      w, {segment, proto::WireKind::recoded, proto::kDenseWire, static_cast<std::uint32_t>(recoded_)});
  std::uint8_t* coefficients = w.reserve(n_s);
  std::uint8_t* payload = w.reserve(info_.symbol_size);
  if (!w.ok()) return false;
  recoder->produce(1, &payload, coefficients);
  ++recoded_;
  return true;
}

}  // namespace ncast::peer
