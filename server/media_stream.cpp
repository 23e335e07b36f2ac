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

void MediaStream::serve_file(const std::filesystem::path& path, SegmentCache& cache) {
  if (segment_count() > 0) throw std::invalid_argument("stream " + info_.name + " has segments already");
  file_ = std::make_unique<FileSegments>(path, segment_bytes(), info_.symbol_size, cache, cache_base_);
  final_ = true;
}

void MediaStream::append(std::span<const std::uint8_t> data, bool entry) {
  if (final_) throw std::invalid_argument("stream " + info_.name + " is final");
  const std::size_t L = info_.symbol_size;
  if (data.empty() || data.size() > segment_bytes())
    throw std::invalid_argument("segment of " + std::to_string(data.size()) + " octets (1.." +
                                std::to_string(segment_bytes()) + " expected)");
  const std::size_t n_s = (data.size() + L - 1) / L;
  auto block = std::make_shared<HostBuffer>(allocate_host(cache_.coder().backend(), n_s * L));
  std::memcpy(block->data(), data.data(), data.size());
  std::memset(block->data() + data.size(), 0, n_s * L - data.size());
  descriptors_.push_back({static_cast<std::uint32_t>(data.size()), proto::sha256(data)});
  held_.push_back({std::move(block), std::chrono::steady_clock::now()});
  held_bytes_ += data.size();
  bytes_ += data.size();
  cache_.coder().add(segment(segment_count() - 1).generation);
  if (entry) live_edge_ = segment_count() - 1;
  drop_beyond_window();
}

void MediaStream::drop_beyond_window() {
  const auto now = std::chrono::steady_clock::now();
  while (held_.size() > 1) {
    const bool too_much = window_.bytes > 0 && held_bytes_ > window_.bytes;
    const bool too_old = window_.age.count() > 0 && now - held_.front().appended > window_.age;
    if (!too_much && !too_old) break;
    held_bytes_ -= descriptors_[first_].size;
    // Senders holding the block keep it until they let go; its coded symbols are of no more use.
    cache_.forget(cache_base_ | first_);
    held_.pop_front();
    ++first_;
  }
}

std::size_t MediaStream::rank(std::uint32_t segment) const {
  if (segment >= segment_count() || segment < first_) return 0;
  return symbols_of(segment);
}

SegmentRef MediaStream::make_ref(std::uint32_t segment, const proto::SegmentDescriptor& d, SegmentBlock block) const {
  const std::size_t n_s = (d.size + info_.symbol_size - 1) / info_.symbol_size;
  return {GenerationRef{cache_base_ | segment, block ? block->data() : nullptr, n_s, info_.symbol_size, d.size,
                        rlnc::SeedContext{seed_, segment}, epoch_, density_},
          d, std::move(block)};
}

SegmentRef MediaStream::segment(std::uint32_t i) const {
  if (file_) return make_ref(i, file_->descriptor(i), file_->block(i));
  const proto::SegmentDescriptor& d = descriptors_.at(i);
  return make_ref(i, d, i >= first_ ? held_[i - first_].block : nullptr);
}

bool write_systematic_symbol(const SegmentRef& s, std::uint32_t i, proto::Writer& w) {
  const GenerationRef& g = s.generation;
  if (i >= g.n_s || !g.block) return false;
  const auto segment = static_cast<std::uint32_t>(g.seeds.segment);
  proto::write_coded_header(w, {segment, proto::WireKind::systematic, proto::kDenseWire, i});
  w.bytes({g.block + std::size_t{i} * g.symbol_size, g.symbol_size});
  return w.ok();
}

bool write_coded_symbol(CodedCache& cache, const SegmentRef& s, std::uint32_t j, proto::Writer& w) {
  const GenerationRef& g = s.generation;
  if (j >= 65536 || !g.block) return false;
  const std::uint8_t* payload = cache.get(g, j);
  const auto segment = static_cast<std::uint32_t>(g.seeds.segment);
  proto::write_coded_header(w, {segment, proto::WireKind::seeded, static_cast<std::uint16_t>(g.density.threshold() - 1),
                                (g.epoch << 16) | j});
  w.bytes({payload, g.symbol_size});
  return w.ok();
}

bool MediaStream::write_systematic(std::uint32_t segment, std::uint32_t i, proto::Writer& w) {
  return segment < segment_count() && write_systematic_symbol(this->segment(segment), i, w);
}

bool MediaStream::write_coded(std::uint32_t segment, std::uint32_t j, proto::Writer& w) {
  return segment < segment_count() && write_coded_symbol(cache_, this->segment(segment), j, w);
}

}  // namespace ncast::server
