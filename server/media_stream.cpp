#include "server/media_stream.hpp"

#include <atomic>
#include <cstring>
#include <stdexcept>

#include "protocol/crypto.hpp"

namespace ncast::server {
namespace {

// Cache keys: the stream's number in this process in the high 32 bits, the segment below.
std::uint32_t next_stream_number() {
  static std::atomic<std::uint32_t> next{0};
  return ++next;
}

}  // namespace

std::uint32_t stream_id_of(const std::string& name) {
  const auto h = proto::sha256({reinterpret_cast<const std::uint8_t*>(name.data()), name.size()});
  return std::uint32_t{h[0]} << 24 | std::uint32_t{h[1]} << 16 | std::uint32_t{h[2]} << 8 | h[3];
}

MediaStream::MediaStream(StreamInfo info, CodedCache& cache, rlnc::Density density)
    : info_(std::move(info)),
      cache_(cache),
      density_(density),
      seed_(rlnc::coefficient_seed(info_.server_id, info_.stream_id)),
      epoch_(1 + proto::random_u32() % 65535),
      cache_base_(std::uint64_t{next_stream_number()} << 32) {
  if (info_.n == 0 || info_.n > proto::kMaxSymbols || info_.symbol_size == 0 ||
      info_.symbol_size > proto::kMaxSymbolSize)
    throw std::invalid_argument("stream " + info_.name + ": n must be 1..256 and the symbol size 1..65536");
}

void MediaStream::append(std::span<const std::uint8_t> data, bool entry) {
  if (final_) throw std::invalid_argument("stream " + info_.name + " is final");
  const std::size_t L = info_.symbol_size;
  if (data.empty() || data.size() > segment_bytes())
    throw std::invalid_argument("segment of " + std::to_string(data.size()) + " octets (1.." +
                                std::to_string(segment_bytes()) + " expected)");
  Segment s;
  s.n_s = (data.size() + L - 1) / L;
  s.block = allocate_host(cache_.coder().backend(), s.n_s * L);
  std::memcpy(s.block.data(), data.data(), data.size());
  std::memset(s.block.data() + data.size(), 0, s.n_s * L - data.size());
  s.descriptor.size = static_cast<std::uint32_t>(data.size());
  s.descriptor.hash = proto::sha256(data);
  segments_.push_back(std::move(s));
  bytes_ += data.size();
  cache_.coder().add(generation(segment_count() - 1));
  if (entry) live_edge_ = segment_count() - 1;
}

GenerationRef MediaStream::generation(std::uint32_t segment) const {
  const Segment& s = segments_[segment];
  return {cache_base_ | segment,
          s.block.data(),
          s.n_s,
          info_.symbol_size,
          s.descriptor.size,
          rlnc::SeedContext{seed_, segment},
          epoch_,
          density_};
}

bool write_systematic_symbol(const SegmentRef& s, std::uint32_t i, proto::Writer& w) {
  const GenerationRef& g = s.generation;
  if (i >= g.n_s) return false;
  const auto segment = static_cast<std::uint32_t>(g.seeds.segment);
  proto::write_coded_header(w, {segment, proto::WireKind::systematic, proto::kDenseWire, i});
  w.bytes({g.block + std::size_t{i} * g.symbol_size, g.symbol_size});
  return w.ok();
}

bool write_coded_symbol(CodedCache& cache, const SegmentRef& s, std::uint32_t j, proto::Writer& w) {
  const GenerationRef& g = s.generation;
  if (j >= 65536) return false;
  const std::uint8_t* payload = cache.get(g, j);
  const auto segment = static_cast<std::uint32_t>(g.seeds.segment);
  proto::write_coded_header(w, {segment, proto::WireKind::seeded, static_cast<std::uint16_t>(g.density.threshold() - 1),
                                (g.epoch << 16) | j});
  w.bytes({payload, g.symbol_size});
  return w.ok();
}

bool MediaStream::write_systematic(std::uint32_t segment, std::uint32_t i, proto::Writer& w) {
  return segment < segments_.size() && write_systematic_symbol(this->segment(segment), i, w);
}

bool MediaStream::write_coded(std::uint32_t segment, std::uint32_t j, proto::Writer& w) {
  return segment < segments_.size() && write_coded_symbol(cache_, this->segment(segment), j, w);
}

}  // namespace ncast::server
