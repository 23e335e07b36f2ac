// Symbols sealed once for every session of a stream: a repeat comes from the cache as the same octets,
// an evicted one is sealed again into the same octets (same nonce, same plaintext), a source whose
// symbols do not repeat (a relay's) is sealed each time, and every shared part opens under the stream key.
#include "server/shared_symbols.hpp"

#include <gtest/gtest.h>

#include <random>

#include "coding/cpu_engine.hpp"
#include "server/media_stream.hpp"

namespace ncast::server {
namespace {

struct Stream {
  Stream() : coder(make_engine_chunk_coder(engine)), cache(*coder, 1 << 20) {
    std::mt19937_64 rng(3);
    std::vector<std::uint8_t> data(8 * 64 * 2);
    for (auto& x : data) x = static_cast<std::uint8_t>(rng());
    stream.append({data.data(), 512});
    stream.append({data.data() + 512, 512});
    stream.finish();
  }
  CpuEngine engine;
  std::unique_ptr<ChunkCoder> coder;
  CodedCache cache;
  MediaStream stream{{"clip", stream_id_of("clip"), 42, 8, 64, 0, false}, cache};
};

// A source whose coded symbols are fresh every time, as a relay's are.
class FreshSource final : public SymbolSource {
 public:
  explicit FreshSource(SymbolSource& inner) : inner_(inner) {}
  const StreamInfo& info() const override { return inner_.info(); }
  std::uint32_t segment_count() const override { return inner_.segment_count(); }
  bool final() const override { return inner_.final(); }
  std::uint32_t live_edge() const override { return 0; }
  const proto::SegmentDescriptor& descriptor(std::uint32_t s) const override { return inner_.descriptor(s); }
  std::size_t rank(std::uint32_t s) const override { return inner_.rank(s); }
  bool can_send_systematic() const override { return false; }
  bool write_systematic(std::uint32_t, std::uint32_t, proto::Writer&) override { return false; }
  bool write_coded(std::uint32_t segment, std::uint32_t, proto::Writer& w) override {
    return inner_.write_coded(segment, made_++, w);
  }
  bool coded_symbols_repeat() const override { return false; }

 private:
  SymbolSource& inner_;
  std::uint32_t made_ = 0;
};

std::vector<std::uint8_t> opened(const proto::StreamKey& key, const SharedPart& part) {
  auto aead = proto::stream_aead(key, proto::Aead::Direction::open);
  std::vector<std::uint8_t> copy = part.bytes;
  auto body = proto::open_shared(aead, copy);
  EXPECT_TRUE(body);
  EXPECT_EQ(part.digest, proto::sha256(part.bytes));
  return body ? std::vector<std::uint8_t>(body->begin(), body->end()) : std::vector<std::uint8_t>{};
}

TEST(SharedSymbols, SealedOnceAndOpenedWithTheStreamKey) {
  Stream s;
  SharedSymbols shared(s.stream, proto::Suite::aes128_gcm, 8 << 20);
  const auto first = shared.coded(1, 3);
  ASSERT_TRUE(first);
  const auto bytes = first->bytes;
  EXPECT_EQ(shared.coded(1, 3)->bytes, bytes);
  EXPECT_EQ(shared.stats().sealed, 1u);
  EXPECT_EQ(shared.stats().hits, 1u);
  // What the peer opens is what the source writes.
  std::vector<std::uint8_t> plain(bytes.size() - proto::kTagSize);
  proto::Writer w(plain);
  ASSERT_TRUE(s.stream.write_coded(1, 3, w));
  EXPECT_EQ(opened(shared.key(), *first), plain);
  // Systematic symbol 3 is another symbol than coded symbol 3.
  ASSERT_TRUE(shared.systematic(1, 3));
  EXPECT_NE(shared.systematic(1, 3)->bytes, bytes);
  EXPECT_EQ(shared.stats().sealed, 2u);
  EXPECT_FALSE(shared.coded(2, 0)) << "no segment 2";
}

TEST(SharedSymbols, AnEvictedSymbolIsSealedAgainIntoTheSameOctets) {
  Stream s;
  SharedSymbols shared(s.stream, proto::Suite::chacha20_poly1305, 100);  // room for one symbol
  const auto bytes = shared.coded(0, 5)->bytes;
  ASSERT_TRUE(shared.coded(0, 6));
  EXPECT_EQ(shared.coded(0, 5)->bytes, bytes);
  EXPECT_EQ(shared.stats().sealed, 3u);
  EXPECT_EQ(shared.stats().hits, 0u);
}

TEST(SharedSymbols, SymbolsThatDoNotRepeatAreSealedEachTime) {
  Stream s;
  FreshSource fresh(s.stream);
  SharedSymbols shared(fresh, proto::Suite::aes128_gcm, 8 << 20);
  const auto a = shared.coded(0, 0)->bytes;
  const auto b = shared.coded(0, 0)->bytes;
  EXPECT_NE(a, b);
  EXPECT_EQ(shared.stats().sealed, 2u);
}

// A packet queued with a shared part (the socket holds it) sends it in place later: neither eviction
// nor the next symbol may change it until then.
TEST(SharedSymbols, AHeldPartOutlivesEvictionUnchanged) {
  Stream s;
  SharedSymbols shared(s.stream, proto::Suite::aes128_gcm, 100);  // room for one symbol
  const auto held = shared.coded(0, 5);
  const auto bytes = held->bytes;
  for (std::uint32_t j = 6; j < 12; ++j) ASSERT_TRUE(shared.coded(0, j));  // evicts it, and seals others
  EXPECT_EQ(held->bytes, bytes);
  EXPECT_EQ(held->digest, proto::sha256(bytes));
}

TEST(SharedSymbols, AHeldFreshPartIsNotSealedOver) {
  Stream s;
  FreshSource fresh(s.stream);
  SharedSymbols shared(fresh, proto::Suite::aes128_gcm, 8 << 20);
  const auto held = shared.coded(0, 0);
  const auto bytes = held->bytes;
  ASSERT_TRUE(shared.coded(0, 1));
  EXPECT_EQ(held->bytes, bytes);
  EXPECT_EQ(held->digest, proto::sha256(bytes));
}

}  // namespace
}  // namespace ncast::server
