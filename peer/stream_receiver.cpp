#include "peer/stream_receiver.hpp"

#include <openssl/crypto.h>

#include <algorithm>

#include "coding/rlnc/error.hpp"
#include "coding/rlnc/generation.hpp"
#include "peer/wire_symbol.hpp"
#include "protocol/crypto.hpp"

namespace ncast::peer {

StreamReceiver::StreamReceiver(Options options, Writer write, std::shared_ptr<DecoderFactory> decoders)
    : options_(options),
      write_(std::move(write)),
      decoders_(std::move(decoders)),
      coefficients_(proto::kMaxSymbols),
      origins_(options.origin_key) {
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
    table_.start(m);
    return {};
  }
  if (m.name != params_.name || m.stream_id != params_.stream_id || m.n != params_.n ||
      m.symbol_size != params_.symbol_size)
    return "the manifest describes another stream (name, id, n or symbol size differ)";
  // A rejoin past segments a live server no longer keeps: it starts at the oldest it keeps, and the
  // segments in between are skipped (docs/protocol.md section 9).
  if (m.start_segment > next_write_) {
    stats_.skipped += m.start_segment - next_write_;
    slots_.erase(slots_.lower_bound(next_write_), slots_.lower_bound(m.start_segment));
    next_write_ = m.start_segment;
  }
  return {};
}

bool StreamReceiver::on_segments(const proto::SegmentsBody& body, TimePoint now) {
  // Check everything before changing anything.
  for (std::size_t i = 0; i < body.descriptors.size(); ++i) {
    const std::uint64_t s = std::uint64_t{body.first} + i;
    if (s < descriptors_.size() && !(descriptors_[s] == body.descriptors[i])) return false;
  }
  if (final_seen_ && body.segment_count != descriptors_.size()) return false;  // a final stream does not grow
  for (std::size_t i = 0; i < body.descriptors.size(); ++i) {
    const std::uint64_t s = std::uint64_t{body.first} + i;
    if (s == descriptors_.size()) {
      descriptors_.push_back(body.descriptors[i]);
      known_at_.push_back(now);
      table_.append(body.descriptors[i]);
    }
  }
  if ((body.stream_flags & proto::stream_flags::final) && descriptors_.size() == body.segment_count) final_seen_ = true;
  // The segment awaited exists at the server now (a live one had not been made before).
  if (!waiting_ && first_segment_at_ && expecting_data()) {
    waiting_ = true;
    waiting_since_ = std::max(now, played_until_);
  }
  return true;
}

StreamReceiver::Sealed StreamReceiver::on_sealed_segments(const proto::SegmentsBody& body,
                                                          const proto::PublicKey& origin, TimePoint now) {
  // No descriptors and no final flag: it claims nothing about the table (a server's path probe), so
  // there is no seal to check and nothing to take; it is only acknowledged.
  if (body.descriptors.empty() && !(body.stream_flags & proto::stream_flags::final)) return Sealed::accepted;
  if (body.first > known()) return Sealed::ahead;
  if (!table_.verifies(body, origin)) return Sealed::forged;
  if (!on_segments(body, now)) return Sealed::contradicts;
  table_.keep(body, origin);
  return Sealed::accepted;
}

std::optional<std::size_t> StreamReceiver::symbols_of(std::uint32_t segment) const {
  if (!adopted_ || segment >= descriptors_.size()) return std::nullopt;
  return (descriptors_[segment].size + params_.symbol_size - 1) / params_.symbol_size;
}

proto::Parsed<proto::CodedView> StreamReceiver::read_coded(std::span<const std::uint8_t> body) const {
  const auto segment = proto::peek_coded_segment(body);
  if (!segment) return proto::DropReason::truncated;
  const auto n_s = symbols_of(*segment);
  if (!n_s) return proto::DropReason::unexpected;
  return proto::decode_coded_body(body, *n_s, params_.symbol_size);
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

std::optional<StreamReceiver::Result> StreamReceiver::screen(std::uint32_t segment, std::uint32_t server_id) {
  if (pollution_.convicted(server_id)) {
    ++stats_.from_polluters;
    return Result::ignored;
  }
  if (segment < next_write_) {
    ++stats_.after_decode;
    return Result::after_decode;
  }
  if (segment >= std::uint64_t{next_write_} + options_.window) {
    ++stats_.out_of_window;
    return Result::out_of_window;
  }
  return std::nullopt;
}

StreamReceiver::Result StreamReceiver::on_symbol(const proto::CodedView& v, std::uint32_t server_id, TimePoint now) {
  const std::uint32_t seg = v.header.segment;
  if (!adopted_ || seg >= descriptors_.size()) return Result::rejected;
  ++stats_.symbols;
  if (const auto screened = screen(seg, server_id)) return *screened;
  Slot& slot = *slot_for(seg);
  if (slot.decoded || slot.decoding) {
    ++stats_.after_decode;
    return Result::after_decode;
  }
  SegmentEvidence& evidence = slot.evidence;
  if (evidence.only_from && pollution_.convicted(*evidence.only_from)) {  // caught meanwhile: next one
    pollution_.decode_alone(evidence, *slot.decoder, params_.symbol_size);
    if (slot.decoder->complete()) return settle(slot, seg, now);
  }
  if (pollution_.hold_back(evidence, server_id, slot.decoder->layout().n())) {
    ++stats_.held_back;
    return Result::ignored;
  }
  return add_symbol(slot, v, server_id, now);
}

StreamReceiver::Result StreamReceiver::add_symbol(Slot& slot, const proto::CodedView& v, std::uint32_t server_id,
                                                  TimePoint now) {
  SegmentDecoder& dec = *slot.decoder;
  CodecSymbol symbol;
  try {
    symbol = codec_symbol(v, server_id, params_.stream_id, dec.layout().n(), coefficients_);
    if (dec.add(symbol.view) == rlnc::AddResult::non_innovative) {
      ++stats_.non_innovative;
      return Result::non_innovative;
    }
  } catch (const rlnc::Error&) {
    ++stats_.rejected;
    return Result::rejected;
  }
  ++stats_.innovative;
  // A counting decoder's segment is never verified, so never fails: there is nothing to keep evidence for.
  if (!dec.counts_only()) slot.evidence.kept.add(symbol.coefficients, v.payload, server_id);
  if (!dec.complete()) return Result::innovative;
  return settle(slot, v.header.segment, now);
}

StreamReceiver::Result StreamReceiver::settle(Slot& slot, std::uint32_t segment, TimePoint now) {
  // (A failure may refill the decoder from one source's evidence, completing it again.)
  for (;;) {
    slot.decoding = !slot.decoder->data_ready();
    if (slot.decoding) return Result::full_rank;
    if (slot.decoder->counts_only() || verifies(segment, *slot.decoder)) break;
    ++stats_.hash_failures;
    pollution_.on_hash_failure(slot.evidence, *slot.decoder, segment, params_.symbol_size);
    if (!slot.decoder->complete()) return Result::rejected;
  }
  if (pollution_.convict_from_evidence(slot.evidence, *slot.decoder, segment)) ++stats_.recovered;
  slot.evidence.kept = {};
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

void StreamReceiver::write_ready(TimePoint now) {
  for (;;) {
    auto it = slots_.find(next_write_);
    if (it == slots_.end() || !it->second.decoded) break;
    SegmentDecoder& decoder = *it->second.decoder;
    const std::size_t bytes = decoder.layout().data_bytes();
    write_(decoder.counts_only() ? std::span<const std::uint8_t>{} : decoder.data());
    ++stats_.segments_written;
    stats_.bytes_written += bytes;
    stats_.symbols_needed += decoder.layout().n();
    if (!first_segment_at_) first_segment_at_ = now;
    if (waiting_) count_stall(now);
    played_until_ = std::max(played_until_, now) + play_time(bytes);
    if (options_.keep_segments) stats_.kept_bytes += footprint(it->second);
    else slots_.erase(it);
    ++next_write_;
    // The player wants the next segment once it has played this one, and only a segment the server
    // has can be late: a live segment not made yet is awaited from when its descriptor arrives.
    waiting_ = expecting_data();
    waiting_since_ = played_until_;
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

Clock::duration StreamReceiver::play_time(std::size_t bytes) const {
  if (params_.bitrate == 0) return Clock::duration::zero();
  return std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(8.0 * static_cast<double>(bytes) / static_cast<double>(params_.bitrate)));
}

void StreamReceiver::count_stall(TimePoint now) {
  const auto waited = now - waiting_since_;
  if (params_.bitrate > 0 && waited > Clock::duration::zero())
    stats_.below_bitrate_seconds += std::chrono::duration<double>(waited).count();
  if (waited <= options_.stall_threshold) return;
  ++stats_.stalls;
  stats_.stall_seconds += std::chrono::duration<double>(waited - options_.stall_threshold).count();
}

void StreamReceiver::finish(TimePoint now) {
  if (waiting_ && expecting_data()) count_stall(now);
  waiting_ = false;
}

std::vector<proto::AckEntry> StreamReceiver::ack_entries() const {
  std::vector<proto::AckEntry> out;
  ack_entries(out);
  return out;
}

void StreamReceiver::ack_entries(std::vector<proto::AckEntry>& out) const {
  out.clear();
  for (auto it = slots_.lower_bound(next_write_); it != slots_.end() && out.size() < proto::kMaxAckEntries; ++it) {
    if (it->first >= std::uint64_t{next_write_} + options_.window) break;
    const auto rank = it->second.decoder->rank();
    if (rank == 0 && !it->second.decoded) continue;
    out.push_back({it->first, static_cast<std::uint16_t>(rank), it->second.decoded});
  }
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
