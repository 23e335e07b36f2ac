#include "server/shared_symbols.hpp"

namespace ncast::server {

SharedSymbols::SharedSymbols(SymbolSource& source, proto::Suite suite, std::size_t budget_bytes)
    : source_(source),
      key_(proto::StreamKey::generate(suite)),
      aead_(proto::stream_aead(key_, proto::Aead::Direction::seal)),
      budget_(budget_bytes) {}

std::shared_ptr<const SharedPart> SharedSymbols::systematic(std::uint32_t segment, std::uint32_t i) {
  return get({segment, true, i}, true, [&](proto::Writer& w) { return source_.write_systematic(segment, i, w); });
}

std::shared_ptr<const SharedPart> SharedSymbols::coded(std::uint32_t segment, std::uint32_t j) {
  return get({segment, false, j}, source_.coded_symbols_repeat(),
             [&](proto::Writer& w) { return source_.write_coded(segment, j, w); });
}

bool SharedSymbols::seal(SharedPart& part, auto&& write) {
  const StreamInfo& info = source_.info();
  part.bytes.resize(proto::kCodedHeaderSize + info.n + info.symbol_size + proto::kTagSize);
  proto::Writer w(part.bytes);
  if (!write(w) || !w.ok() || !w.reserve(proto::kTagSize)) return false;
  part.bytes.resize(w.size());
  proto::seal_shared(aead_, part.bytes);
  part.digest = proto::sha256(part.bytes);
  ++stats_.sealed;
  return true;
}

std::shared_ptr<SharedPart>& SharedSymbols::entry(const Place& at) {
  if (!last_ || last_segment_ != at.segment) {
    last_ = &segments_[at.segment];
    last_segment_ = at.segment;
  }
  auto& parts = at.systematic ? last_->systematic : last_->coded;
  if (parts.size() <= at.index) parts.resize(at.index + 1);
  return parts[at.index];
}

void SharedSymbols::evict_oldest() {
  // Packets still queued with the part keep it alive: eviction only drops the cache's hold.
  const Place oldest = order_.front();
  order_.pop_front();
  const auto it = segments_.find(oldest.segment);
  auto& part = (oldest.systematic ? it->second.systematic : it->second.coded)[oldest.index];
  bytes_ -= part->bytes.size();
  part.reset();
  if (--it->second.kept > 0) return;
  if (last_ == &it->second) last_ = nullptr;
  segments_.erase(it);
}

template <typename Write>
std::shared_ptr<const SharedPart> SharedSymbols::get(const Place& at, bool repeats, Write&& write) {
  if (!repeats) {
    if (!fresh_ || fresh_.use_count() > 1) fresh_ = std::make_shared<SharedPart>();
    if (seal(*fresh_, write)) return fresh_;
    return nullptr;
  }
  if (const auto& kept = entry(at)) {
    ++stats_.hits;
    return kept;
  }
  auto part = std::make_shared<SharedPart>();
  if (!seal(*part, write)) {
    if (last_->kept == 0) {  // a segment the source has nothing of: keep no entry for it
      segments_.erase(at.segment);
      last_ = nullptr;
    }
    return nullptr;
  }
  while (bytes_ + part->bytes.size() > budget_ && !order_.empty()) evict_oldest();
  // Eviction may have dropped the segment's entries: look its entry up again.
  entry(at) = part;
  ++last_->kept;
  bytes_ += part->bytes.size();
  order_.push_back(at);
  return part;
}

}  // namespace ncast::server
