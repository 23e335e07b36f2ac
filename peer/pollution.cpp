#include "peer/pollution.hpp"

#include <algorithm>

#include "coding/rlnc/encoder.hpp"

namespace ncast::peer {

void Rows::add(std::span<const std::uint8_t> coefficients, std::span<const std::uint8_t> payload,
               std::uint32_t source) {
  bytes.insert(bytes.end(), coefficients.begin(), coefficients.end());
  bytes.insert(bytes.end(), payload.begin(), payload.end());
  sources.push_back(source);
}

bool PollutionGuard::hold_back(SegmentEvidence& e, std::uint32_t server_id, std::size_t n_s) {
  if (!e.only_from || *e.only_from == server_id) return false;
  if (++e.held_back <= 8u * n_s) return true;
  e.only_from.reset();
  return false;
}

void PollutionGuard::on_hash_failure(SegmentEvidence& e, SegmentDecoder& decoder, std::uint32_t segment,
                                     std::size_t symbol_size) {
  const std::size_t n_s = decoder.layout().n(), row = n_s + symbol_size;
  // One source alone decoded to the wrong data: proof enough.
  const auto& kept = e.kept.sources;
  if (std::all_of(kept.begin(), kept.end(), [&](std::uint32_t s) { return s == kept.front(); }))
    convict(kept.front(), segment, 0);
  Rows& f = e.failed;
  f.bytes.insert(f.bytes.end(), e.kept.bytes.begin(), e.kept.bytes.end());
  f.sources.insert(f.sources.end(), kept.begin(), kept.end());
  if (const std::size_t cap = 4 * n_s; f.sources.size() > cap) {
    const std::size_t drop = f.sources.size() - cap;
    f.sources.erase(f.sources.begin(), f.sources.begin() + static_cast<long>(drop));
    f.bytes.erase(f.bytes.begin(), f.bytes.begin() + static_cast<long>(drop * row));
  }
  decode_alone(e, decoder, symbol_size);
}

void PollutionGuard::decode_alone(SegmentEvidence& e, SegmentDecoder& decoder, std::size_t symbol_size) const {
  decoder.reset();
  e.kept.clear();
  const std::size_t n_s = decoder.layout().n(), row = n_s + symbol_size;
  const Rows& f = e.failed;
  std::map<std::uint32_t, std::size_t> sent;
  for (std::uint32_t s : f.sources)
    if (!polluters_.contains(s)) ++sent[s];
  e.only_from.reset();
  e.held_back = 0;
  if (sent.empty()) return;
  const std::uint32_t next = std::max_element(sent.begin(), sent.end(), [](const auto& x, const auto& y) {
                               return x.second < y.second;
                             })->first;
  e.only_from = next;
  for (std::size_t r = 0; r < f.sources.size(); ++r) {
    if (f.sources[r] != next) continue;
    const std::uint8_t* p = f.bytes.data() + r * row;
    if (decoder.add({rlnc::SymbolKind::recoded, 0, {}, {p, n_s}, {p + n_s, symbol_size}}) ==
        rlnc::AddResult::innovative)
      e.kept.add({p, n_s}, {p + n_s, symbol_size}, next);
  }
}

bool PollutionGuard::convict_from_evidence(SegmentEvidence& e, SegmentDecoder& decoder, std::uint32_t segment) {
  e.only_from.reset();
  if (e.failed.sources.empty()) return false;
  // The true source block: the verified data, zero-padded as every encoder pads it; each piece of
  // evidence is encoded again from it with its own coefficients.
  const rlnc::GenerationLayout& layout = decoder.layout();
  const std::size_t n_s = layout.n(), L = layout.symbol_size(), row = n_s + L;
  std::vector<std::uint8_t> block(layout.block_bytes(), 0), expected(L);
  const auto data = decoder.data();
  std::copy(data.begin(), data.end(), block.begin());
  const rlnc::Encoder encoder(layout, block, rlnc::SeedContext{0, segment});
  std::map<std::uint32_t, std::uint64_t> wrong;
  for (std::size_t r = 0; r < e.failed.sources.size(); ++r) {
    const std::uint8_t* p = e.failed.bytes.data() + r * row;
    std::uint8_t* out = expected.data();
    encoder.combine({p, n_s}, &out, 1);
    if (!std::equal(expected.begin(), expected.end(), p + n_s)) ++wrong[e.failed.sources[r]];
  }
  for (const auto& [source, count] : wrong) convict(source, segment, count);
  e.failed = {};
  return true;
}

void PollutionGuard::convict(std::uint32_t server_id, std::uint32_t segment, std::uint64_t bad_symbols) {
  auto [it, fresh] = polluters_.try_emplace(server_id, Polluter{server_id, segment, 0, 0});
  it->second.bad_symbols += bad_symbols;
  ++it->second.segments;
  if (fresh) new_polluters_.push_back(server_id);
}

}  // namespace ncast::peer
