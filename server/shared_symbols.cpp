#include "server/shared_symbols.hpp"

namespace ncast::server {

SharedSymbols::SharedSymbols(SymbolSource& source, proto::Suite suite, std::size_t budget_bytes)
    : source_(source),
      key_(proto::StreamKey::generate(suite)),
      aead_(proto::stream_aead(key_, proto::Aead::Direction::seal)),
      budget_(budget_bytes) {}

const SharedPart* SharedSymbols::systematic(std::uint32_t segment, std::uint32_t i) {
  return get(std::uint64_t{segment} << 32 | std::uint64_t{1} << 31 | i, true,
             [&](proto::Writer& w) { return source_.write_systematic(segment, i, w); });
}

const SharedPart* SharedSymbols::coded(std::uint32_t segment, std::uint32_t j) {
  // j < 65536 (docs/protocol.md section 6): below the systematic symbols' bit.
  return get(std::uint64_t{segment} << 32 | j, source_.coded_symbols_repeat(),
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

template <typename Write>
const SharedPart* SharedSymbols::get(std::uint64_t cache_key, bool repeats, Write&& write) {
  if (!repeats) return seal(fresh_, write) ? &fresh_ : nullptr;
  if (auto it = parts_.find(cache_key); it != parts_.end()) {
    ++stats_.hits;
    return &it->second;
  }
  SharedPart part;
  if (!seal(part, write)) return nullptr;
  while (bytes_ + part.bytes.size() > budget_ && !order_.empty()) {
    const auto oldest = parts_.find(order_.front());
    bytes_ -= oldest->second.bytes.size();
    parts_.erase(oldest);
    order_.pop_front();
  }
  bytes_ += part.bytes.size();
  order_.push_back(cache_key);
  return &parts_.emplace(cache_key, std::move(part)).first->second;
}

}  // namespace ncast::server
