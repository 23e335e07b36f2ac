#include "peer/stream_receiver.hpp"

#include <openssl/crypto.h>

#include <algorithm>

#include "coding/region.hpp"
#include "coding/rlnc/coefficients.hpp"
#include "coding/rlnc/error.hpp"
#include "coding/rlnc/generation.hpp"
#include "protocol/crypto.hpp"

namespace ncast::peer {

StreamReceiver::StreamReceiver(Options options, Writer write, std::shared_ptr<DecoderFactory> decoders)
    : options_(options), write_(std::move(write)), decoders_(std::move(decoders)), coefficients_(proto::kMaxSymbols) {
  if (!decoders_) decoders_ = make_cpu_decoder_factory();
}

std::string StreamReceiver::adopt(const proto::ManifestBody& m) {
  if (!adopted_) {
    params_.name = m.name;
    params_.stream_id = m.stream_id;
    params_.n = m.n;
    params_.symbol_size = m.symbol_size;
    params_.bitrate = m.bitrate;
    params_.live = (m.stream_flags & proto::stream_flags::live) != 0;
    params_.start_segment = m.start_segment;
    next_write_ = m.start_segment;
    adopted_ = true;
    return {};
  }
  if (m.name != params_.name || m.stream_id != params_.stream_id || m.n != params_.n ||
      m.symbol_size != params_.symbol_size)
    return "the manifest describes another stream (name, id, n or symbol size differ)";
  return {};
}

bool StreamReceiver::on_segments(const proto::SegmentsBody& body) {
  // Check everything before changing anything.
  for (std::size_t i = 0; i < body.descriptors.size(); ++i) {
    const std::uint64_t s = std::uint64_t{body.first} + i;
    if (s < descriptors_.size() && !(descriptors_[s] == body.descriptors[i])) return false;
  }
  if (final_seen_ && body.segment_count != descriptors_.size()) return false;  // a final stream does not grow
  for (std::size_t i = 0; i < body.descriptors.size(); ++i) {
    const std::uint64_t s = std::uint64_t{body.first} + i;
    if (s == descriptors_.size()) descriptors_.push_back(body.descriptors[i]);
  }
  if ((body.stream_flags & proto::stream_flags::final) && descriptors_.size() == body.segment_count) final_seen_ = true;
  return true;
}

std::optional<std::size_t> StreamReceiver::symbols_of(std::uint32_t segment) const {
  if (!adopted_ || segment >= descriptors_.size()) return std::nullopt;
  return (descriptors_[segment].size + params_.symbol_size - 1) / params_.symbol_size;
}

StreamReceiver::Slot* StreamReceiver::slot_for(std::uint32_t segment) {
  auto it = slots_.find(segment);
  if (it != slots_.end()) return &it->second;
  const auto n_s = symbols_of(segment);
  if (!n_s) return nullptr;
  Slot& s = slots_[segment];
  const rlnc::GenerationLayout layout(*n_s, params_.symbol_size, descriptors_[segment].size);
  // Seeded symbols are resolved here, per server, before they reach the decoder.
  s.decoder = decoders_->open(layout, rlnc::SeedContext{0, segment});
  return &s;
}

StreamReceiver::Result StreamReceiver::on_symbol(const proto::CodedView& v, std::uint32_t server_id, TimePoint now) {
  const std::uint32_t seg = v.header.segment;
  if (!adopted_ || seg >= descriptors_.size()) return Result::rejected;
  ++stats_.symbols;
  if (polluters_.contains(server_id)) {
    ++stats_.from_polluters;
    return Result::ignored;
  }
  if (seg < next_write_) {
    ++stats_.after_decode;
    return Result::after_decode;
  }
  if (seg >= std::uint64_t{next_write_} + options_.window) {
    ++stats_.out_of_window;
    return Result::out_of_window;
  }
  Slot* slot = slot_for(seg);
  if (slot->decoded || slot->decoding) {
    ++stats_.after_decode;
    return Result::after_decode;
  }
  if (slot->only_from && polluters_.contains(*slot->only_from)) {  // caught meanwhile: next one
    decode_alone(*slot);
    if (slot->decoder->complete()) return settle(*slot, seg, now);
  }
  if (slot->only_from && *slot->only_from != server_id) {
    // Bounded: should the one source fall silent, the others are heard again.
    if (++slot->held_back <= 8u * slot->decoder->layout().n()) {
      ++stats_.held_back;
      return Result::ignored;
    }
    slot->only_from.reset();
  }
  SegmentDecoder& dec = *slot->decoder;
  const std::size_t n_s = dec.layout().n();
  rlnc::SymbolView view;
  view.payload = v.payload;
  try {
    switch (v.header.kind) {
      case proto::WireKind::systematic:
        view.kind = rlnc::SymbolKind::systematic;
        view.index = v.header.index;
        // Its coefficients, for the kept row: the unit vector (checked by add() below).
        std::fill_n(coefficients_.begin(), n_s, std::uint8_t{0});
        if (v.header.index < n_s) coefficients_[v.header.index] = 1;
        break;
      case proto::WireKind::seeded:
        view.kind = rlnc::SymbolKind::coded;
        rlnc::draw_coefficients({rlnc::coefficient_seed(server_id, params_.stream_id), seg}, v.header.index,
                                rlnc::Density::from_threshold(std::uint32_t{v.header.density} + 1),
                                {coefficients_.data(), n_s});
        view.coefficients = {coefficients_.data(), n_s};
        break;
      case proto::WireKind::explicit_coded:
        view.kind = rlnc::SymbolKind::coded;
        view.coefficients = v.coefficients;
        break;
      case proto::WireKind::recoded:
        view.kind = rlnc::SymbolKind::recoded;
        view.coefficients = v.coefficients;
        break;
    }
    if (dec.add(view) == rlnc::AddResult::non_innovative) {
      ++stats_.non_innovative;
      return Result::non_innovative;
    }
  } catch (const rlnc::Error&) {
    ++stats_.rejected;
    return Result::rejected;
  }
  ++stats_.innovative;
  const std::span<const std::uint8_t> coefs =
      v.header.kind == proto::WireKind::explicit_coded || v.header.kind == proto::WireKind::recoded
          ? v.coefficients
          : std::span<const std::uint8_t>(coefficients_.data(), n_s);
  slot->kept.bytes.insert(slot->kept.bytes.end(), coefs.begin(), coefs.end());
  slot->kept.bytes.insert(slot->kept.bytes.end(), v.payload.begin(), v.payload.end());
  slot->kept.sources.push_back(server_id);
  if (!dec.complete()) return Result::innovative;
  return settle(*slot, seg, now);
}

StreamReceiver::Result StreamReceiver::settle(Slot& slot, std::uint32_t segment, TimePoint now) {
  // (A failure may refill the decoder from one source's evidence, completing it again.)
  for (;;) {
    slot.decoding = !slot.decoder->data_ready();
    if (slot.decoding) return Result::innovative;
    if (verifies(segment, *slot.decoder)) break;
    on_hash_failure(slot, segment);
    if (!slot.decoder->complete()) return Result::rejected;
  }
  convict_from_evidence(slot, segment);
  slot.kept = {};
  slot.decoded = true;
  // A relay recodes from rows in host memory: a segment decoded elsewhere (the GPU) is held there
  // as its verified source symbols, and the GPU's generation is given back.
  if (options_.keep_segments && !slot.decoder->host_rows())
    slot.decoder = host_decoder_of(slot.decoder->layout(), rlnc::SeedContext{0, segment}, slot.decoder->data());
  write_ready(now);
  return Result::completed;
}

std::size_t StreamReceiver::settle_decoded(TimePoint now) {
  std::vector<std::uint32_t> ready;
  for (const auto& [segment, slot] : slots_)
    if (slot.decoding && slot.decoder->data_ready()) ready.push_back(segment);
  std::size_t completed = 0;
  for (const std::uint32_t segment : ready) {
    // Written segments leave slots_ as they go; those still decoding stay.
    const auto it = slots_.find(segment);
    if (it != slots_.end() && settle(it->second, segment, now) == Result::completed) ++completed;
  }
  return completed;
}

bool StreamReceiver::decoding() const {
  return std::any_of(slots_.begin(), slots_.end(), [](const auto& s) { return s.second.decoding; });
}

bool StreamReceiver::verifies(std::uint32_t segment, SegmentDecoder& decoder) const {
  const auto digest = proto::sha256(decoder.data());
  return CRYPTO_memcmp(digest.data(), descriptors_[segment].hash.data(), digest.size()) == 0;
}

void StreamReceiver::on_hash_failure(Slot& slot, std::uint32_t segment) {
  ++stats_.hash_failures;
  const std::size_t n_s = slot.decoder->layout().n(), row = n_s + params_.symbol_size;
  // One source alone decoded to the wrong data: proof enough.
  const auto& kept = slot.kept.sources;
  if (std::all_of(kept.begin(), kept.end(), [&](std::uint32_t s) { return s == kept.front(); }))
    convict(kept.front(), segment, 0);
  // Keep the symbols as evidence (a bounded amount).
  Rows& e = slot.evidence;
  e.bytes.insert(e.bytes.end(), slot.kept.bytes.begin(), slot.kept.bytes.end());
  e.sources.insert(e.sources.end(), kept.begin(), kept.end());
  if (const std::size_t cap = 4 * n_s; e.sources.size() > cap) {
    const std::size_t drop = e.sources.size() - cap;
    e.sources.erase(e.sources.begin(), e.sources.begin() + static_cast<long>(drop));
    e.bytes.erase(e.bytes.begin(), e.bytes.begin() + static_cast<long>(drop * row));
  }
  decode_alone(slot);
}

void StreamReceiver::decode_alone(Slot& slot) {
  SegmentDecoder& dec = *slot.decoder;
  dec.reset();
  slot.kept.clear();
  const std::size_t n_s = dec.layout().n(), row = n_s + params_.symbol_size;
  const Rows& e = slot.evidence;
  // The source not yet convicted that sent the most, starting from its evidence.
  std::map<std::uint32_t, std::size_t> sent;
  for (std::uint32_t s : e.sources)
    if (!polluters_.contains(s)) ++sent[s];
  slot.only_from.reset();
  slot.held_back = 0;
  if (sent.empty()) return;
  const std::uint32_t next = std::max_element(sent.begin(), sent.end(), [](const auto& x, const auto& y) {
                               return x.second < y.second;
                             })->first;
  slot.only_from = next;
  for (std::size_t r = 0; r < e.sources.size(); ++r) {
    if (e.sources[r] != next) continue;
    const std::uint8_t* p = e.bytes.data() + r * row;
    if (dec.add({rlnc::SymbolKind::recoded, 0, {}, {p, n_s}, {p + n_s, params_.symbol_size}}) ==
        rlnc::AddResult::innovative) {
      slot.kept.bytes.insert(slot.kept.bytes.end(), p, p + row);
      slot.kept.sources.push_back(next);
    }
  }
}

void StreamReceiver::convict_from_evidence(Slot& slot, std::uint32_t segment) {
  slot.only_from.reset();
  if (slot.evidence.sources.empty()) return;
  ++stats_.recovered;
  // The true source block: the verified data, zero-padded as every encoder pads it.
  SegmentDecoder& dec = *slot.decoder;
  const std::size_t n_s = dec.layout().n(), L = params_.symbol_size, row = n_s + L;
  std::vector<std::uint8_t> block(n_s * L, 0), expected(L);
  const auto data = dec.data();
  std::copy(data.begin(), data.end(), block.begin());
  std::vector<const std::uint8_t*> srcs(n_s);
  for (std::size_t j = 0; j < n_s; ++j) srcs[j] = block.data() + j * L;
  std::map<std::uint32_t, std::uint64_t> wrong;
  for (std::size_t r = 0; r < slot.evidence.sources.size(); ++r) {
    const std::uint8_t* p = slot.evidence.bytes.data() + r * row;
    std::uint8_t* out = expected.data();
    gf::kernels().dot_multi(&out, 1, srcs.data(), n_s, p, L, false);
    if (!std::equal(expected.begin(), expected.end(), p + n_s)) ++wrong[slot.evidence.sources[r]];
  }
  for (const auto& [source, count] : wrong) convict(source, segment, count);
  slot.evidence = {};
}

void StreamReceiver::convict(std::uint32_t server_id, std::uint32_t segment, std::uint64_t bad_symbols) {
  auto [it, fresh] = polluters_.try_emplace(server_id, Polluter{server_id, segment, 0, 0});
  it->second.bad_symbols += bad_symbols;
  ++it->second.segments;
  if (fresh) new_polluters_.push_back(server_id);
}

void StreamReceiver::write_ready(TimePoint now) {
  for (;;) {
    auto it = slots_.find(next_write_);
    if (it == slots_.end() || !it->second.decoded) break;
    const auto data = it->second.decoder->data();
    write_(data);
    ++stats_.segments_written;
    stats_.bytes_written += data.size();
    stats_.symbols_needed += it->second.decoder->layout().n();
    if (!first_segment_at_) first_segment_at_ = now;
    if (waiting_) {
      // A stall: the output waited for this segment longer than the threshold.
      const auto waited = now - waiting_since_;
      if (waited > options_.stall_threshold) {
        ++stats_.stalls;
        stats_.stall_seconds += std::chrono::duration<double>(waited - options_.stall_threshold).count();
      }
    }
    waiting_ = true;
    waiting_since_ = now;
    if (options_.keep_segments) stats_.kept_bytes += footprint(it->second);
    else slots_.erase(it);
    ++next_write_;
  }
  if (options_.keep_segments) keep_within_budget();
}

std::uint64_t StreamReceiver::footprint(const Slot& slot) {
  const auto& layout = slot.decoder->layout();
  return std::uint64_t{layout.block_bytes()} + std::uint64_t{layout.n()} * layout.n();
}

void StreamReceiver::keep_within_budget() {
  // The written segments are the first slots, oldest first.
  while (stats_.kept_bytes > options_.keep_bytes && !slots_.empty() && slots_.begin()->first < next_write_) {
    stats_.kept_bytes -= footprint(slots_.begin()->second);
    slots_.erase(slots_.begin());
    ++stats_.evicted;
  }
  stats_.kept_peak_bytes = std::max(stats_.kept_peak_bytes, stats_.kept_bytes);
}

void StreamReceiver::finish(TimePoint now) {
  if (waiting_ && expecting_data()) {
    const auto waited = now - waiting_since_;
    if (waited > options_.stall_threshold) {
      ++stats_.stalls;
      stats_.stall_seconds += std::chrono::duration<double>(waited - options_.stall_threshold).count();
    }
  }
  waiting_ = false;
}

std::vector<proto::AckEntry> StreamReceiver::ack_entries() const {
  std::vector<proto::AckEntry> out;
  for (auto it = slots_.lower_bound(next_write_); it != slots_.end() && out.size() < proto::kMaxAckEntries; ++it) {
    if (it->first >= std::uint64_t{next_write_} + options_.window) break;
    const auto rank = it->second.decoder->rank();
    if (rank == 0 && !it->second.decoded) continue;
    out.push_back({it->first, static_cast<std::uint16_t>(rank), it->second.decoded});
  }
  return out;
}

std::size_t StreamReceiver::rank(std::uint32_t segment) const {
  auto it = slots_.find(segment);
  if (it == slots_.end()) return 0;
  return it->second.decoded ? it->second.decoder->layout().n() : it->second.decoder->rank();
}

const rlnc::Decoder* StreamReceiver::decoder(std::uint32_t segment) const {
  auto it = slots_.find(segment);
  return it == slots_.end() ? nullptr : it->second.decoder->host_rows();
}

}  // namespace ncast::peer
