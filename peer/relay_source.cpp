#include "peer/relay_source.hpp"

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
  if (!node || node->rank() == 0) return false;
  auto& recoder = recoders_[segment];
  // Every call makes a fresh combination, so the ordinal j that an encoder uses is not needed.
  if (!recoder)
    recoder = std::make_unique<rlnc::Recoder>(
        *node, rlnc::SeedContext{rlnc::coefficient_seed(info_.server_id, info_.stream_id), segment});
  const std::size_t n_s = node->layout().n();
  proto::write_coded_header(w, {segment, proto::WireKind::recoded, proto::kDenseWire, 0});
  std::uint8_t* coefficients = w.reserve(n_s);
  std::uint8_t* payload = w.reserve(info_.symbol_size);
  if (!w.ok()) return false;
  recoder->produce(1, &payload, coefficients);
  ++recoded_;
  return true;
}

}  // namespace ncast::peer
