#include "peer/stream_receiver.hpp"

#include <openssl/crypto.h>

#include <algorithm>

#include "coding/rlnc/coefficients.hpp"
#include "coding/rlnc/error.hpp"
#include "coding/rlnc/generation.hpp"
#include "server/protocol/crypto.hpp"

namespace ncast::peer {

StreamReceiver::StreamReceiver(Options options, Writer write)
    : options_(options), write_(std::move(write)), coefficients_(proto::kMaxSymbols) {}

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
  s.buffer.resize(layout.block_bytes());
  // Seeded symbols are resolved here, per server, before they reach the decoder.
  s.decoder = std::make_unique<rlnc::Decoder>(layout, s.buffer, rlnc::SeedContext{0, segment});
  return &s;
}

StreamReceiver::Result StreamReceiver::on_symbol(const proto::CodedView& v, std::uint32_t server_id, TimePoint now) {
  const std::uint32_t seg = v.header.segment;
  if (!adopted_ || seg >= descriptors_.size()) return Result::rejected;
  ++stats_.symbols;
  if (seg < next_write_) {
    ++stats_.after_decode;
    return Result::after_decode;
  }
  if (seg >= std::uint64_t{next_write_} + options_.window) {
    ++stats_.out_of_window;
    return Result::out_of_window;
  }
  Slot* slot = slot_for(seg);
  if (slot->decoded) {
    ++stats_.after_decode;
    return Result::after_decode;
  }
  rlnc::Decoder& dec = *slot->decoder;
  const std::size_t n_s = dec.layout().n();
  rlnc::SymbolView view;
  view.payload = v.payload;
  try {
    switch (v.header.kind) {
      case proto::WireKind::systematic:
        view.kind = rlnc::SymbolKind::systematic;
        view.index = v.header.index;
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
  if (!dec.complete()) return Result::innovative;
  const auto digest = proto::sha256(dec.data());
  if (CRYPTO_memcmp(digest.data(), descriptors_[seg].hash.data(), digest.size()) != 0) {
    // Corrupt symbols (a polluting relay) slipped in: start this segment over.
    ++stats_.hash_failures;
    dec.reset();
    return Result::rejected;
  }
  slot->decoded = true;
  write_ready(now);
  return Result::completed;
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
    if (!options_.keep_segments) slots_.erase(it);
    ++next_write_;
  }
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
  return it == slots_.end() ? nullptr : it->second.decoder.get();
}

}  // namespace ncast::peer
