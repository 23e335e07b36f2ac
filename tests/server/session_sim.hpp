#pragma once
// A session's other side for the session tests, in simulated time: a peer as docs/protocol.md asks of
// it, a stream to serve, and the exchange between them over a lossy channel.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "coding/cpu_engine.hpp"
#include "coding/rlnc/decoder.hpp"
#include "server/media_stream.hpp"
#include "server/session.hpp"

namespace ncast::server::session_sim {

using namespace std::chrono_literals;

class NullObserver : public SessionObserver {
 public:
  void segment_completed(std::size_t sent, std::size_t n_s) override {
    ++completed;
    total_sent += sent;
    total_n += n_s;
  }
  std::size_t completed = 0, total_sent = 0, total_n = 0;
};

inline proto::SessionKeys test_keys(std::mt19937_64& rng) {
  std::vector<std::uint8_t> shared(32), join(64), aad(proto::kManifestAadSize);
  for (auto* v : {&shared, &join, &aad})
    for (auto& b : *v) b = static_cast<std::uint8_t>(rng());
  return proto::derive_session_keys(proto::Suite::aes128_gcm, shared, {}, {}, join, aad);
}

// The peer side, as docs/protocol.md asks of it.
class SimPeer {
 public:
  SimPeer(const proto::SessionKeys& keys, std::uint64_t session, const StreamInfo& info, std::uint16_t window,
          const proto::StreamKey& stream_key)
      : open_(keys.suite, keys.server_key, keys.server_iv, proto::Aead::Direction::open),
        seal_(keys.suite, keys.peer_key, keys.peer_iv, proto::Aead::Direction::seal),
        coded_mac_(keys.coded_mac),
        stream_(proto::stream_aead(stream_key, proto::Aead::Direction::open)),
        session_(session),
        info_(info),
        window_(window) {}

  // late: sent before ACKs the session has already seen (reordered), so not held to them.
  void deliver(std::vector<std::uint8_t> d, bool late = false) {
    auto h = proto::parse_header(d);
    ASSERT_TRUE(h);
    ASSERT_EQ(h->session, session_);
    const bool coded = h->type == proto::PacketType::coded;
    if (coded) {
      ASSERT_TRUE(proto::coded_authentic(d, coded_mac_)) << "a CODED packet's authenticator failed";
    }
    auto body = coded ? proto::open_shared(stream_, *proto::coded_shared_part(d)) : proto::open_packet(d, *h, open_);
    ASSERT_TRUE(body) << "a server packet failed to authenticate";
    ++received_;
    largest_ = std::max(largest_, h->number);
    window_seen_.accept(h->number);
    if (h->type == proto::PacketType::segments) {
      auto s = proto::decode_segments_body(*body, std::size_t{info_.n} * info_.symbol_size);
      ASSERT_TRUE(s);
      for (std::size_t i = 0; i < s->descriptors.size(); ++i)
        if (s->first + i == descriptors_.size()) descriptors_.push_back(s->descriptors[i]);
      final_ = final_ || ((s->stream_flags & proto::stream_flags::final) && descriptors_.size() == s->segment_count);
      return;
    }
    ASSERT_EQ(h->type, proto::PacketType::coded);
    const auto seg = *proto::peek_coded_segment(*body);
    ASSERT_LT(seg, descriptors_.size()) << "CODED for a segment whose descriptor the peer lacks";
    ASSERT_LT(seg, std::uint64_t{acked_next_} + window_) << "CODED beyond the peer's window";
    EXPECT_TRUE(late || !acked_decoded_.count(seg)) << "CODED for segment " << seg << " after its decoded ACK";
    const std::size_t n_s = (descriptors_[seg].size + info_.symbol_size - 1) / info_.symbol_size;
    auto v = proto::decode_coded_body(*body, n_s, info_.symbol_size);
    ASSERT_TRUE(v);
    ++coded_;
    if (!late && acked_full_.count(seg)) ++after_full_;
    if (seg < next_needed_ || full_.count(seg)) return;
    auto& slot = slots_[seg];
    if (!slot.dec) {
      slot.buf.resize(n_s * info_.symbol_size);
      slot.dec = std::make_unique<rlnc::Decoder>(
          rlnc::GenerationLayout(n_s, info_.symbol_size, descriptors_[seg].size), slot.buf,
          rlnc::SeedContext{rlnc::coefficient_seed(info_.server_id, info_.stream_id), seg});
    }
    rlnc::SymbolView view;
    view.payload = v->payload;
    view.index = v->header.index;
    view.kind = v->header.kind == proto::WireKind::systematic ? rlnc::SymbolKind::systematic : rlnc::SymbolKind::coded;
    slot.dec->add(view);
    if (slot.dec->complete()) {
      ASSERT_EQ(proto::sha256(slot.dec->data()), descriptors_[seg].hash);
      full_.insert(seg);
      if (decode_after_ == 0) decode(seg);
      else solving_[seg] = decode_after_;
    }
  }

  std::vector<std::uint8_t> ack() {
    for (auto it = solving_.begin(); it != solving_.end();)
      if (--it->second == 0) {
        decode(it->first);
        it = solving_.erase(it);
      } else {
        ++it;
      }
    proto::AckBody a;
    a.largest = largest_;
    a.received = received_;
    a.known = static_cast<std::uint32_t>(descriptors_.size());
    a.next_needed = next_needed_;
    a.flags = final_ ? proto::ack_flags::final_seen : 0;
    for (std::size_t w = 0; w < history_words_; ++w) a.history.push_back(window_seen_.seen_below(w));
    for (auto& [seg, slot] : slots_)
      if (seg >= next_needed_ && seg < next_needed_ + window_ && (slot.dec->rank() > 0 || decoded_.count(seg)))
        a.entries.push_back({seg, static_cast<std::uint16_t>(slot.dec->rank()), decoded_.count(seg) > 0});
    std::vector<std::uint8_t> out(proto::kMinDatagram);
    out.resize(proto::seal_packet(out, {proto::PacketType::ack, session_, number_++}, seal_,
                                  [&](proto::Writer& w) { proto::write_body(w, a); }));
    // From now on the session knows all this.
    acked_next_ = next_needed_;
    for (auto s : decoded_) acked_decoded_.insert(s);
    acked_full_.insert(full_.begin(), full_.end());
    return out;
  }

  bool complete(std::uint32_t count) const { return final_ && next_needed_ >= count; }
  std::size_t known() const { return descriptors_.size(); }
  // How many words of history its ACKs carry (0: none, as a peer before the history did).
  void history_words(std::size_t words) { history_words_ = words; }
  std::size_t coded() const { return coded_; }
  // A batched decoder's peer: a segment at full rank is decoded only at the `acks`-th ACK after its last
  // symbol came; the ACKs before say rank n_s, not decoded.
  void decode_after(std::size_t acks) { decode_after_ = acks; }
  // Segments at full rank (decoded or not), and the CODED packets that came for one after an ACK said so.
  std::size_t full_rank() const { return full_.size(); }
  std::size_t coded_after_full_rank() const { return after_full_; }
  const std::map<std::uint32_t, std::vector<std::uint8_t>>& data() const { return data_; }

 private:
  struct Slot {
    std::vector<std::uint8_t> buf;
    std::unique_ptr<rlnc::Decoder> dec;
  };
  void decode(std::uint32_t seg) {
    decoded_.insert(seg);
    const auto data = slots_[seg].dec->data();
    data_[seg].assign(data.begin(), data.end());
    while (decoded_.count(next_needed_)) ++next_needed_;
  }
  proto::Aead open_, seal_;
  proto::Cmac coded_mac_;
  proto::Aead stream_;
  std::uint64_t session_;
  StreamInfo info_;
  std::uint16_t window_;
  std::vector<proto::SegmentDescriptor> descriptors_;
  bool final_ = false;
  std::map<std::uint32_t, Slot> slots_;
  std::set<std::uint32_t> decoded_, acked_decoded_, full_, acked_full_;
  std::map<std::uint32_t, std::size_t> solving_;  // at full rank: ACKs until decoded
  std::size_t decode_after_ = 0, after_full_ = 0;
  std::map<std::uint32_t, std::vector<std::uint8_t>> data_;
  std::uint32_t next_needed_ = 0, acked_next_ = 0, received_ = 1;
  std::uint64_t largest_ = 0, number_ = 0;
  std::size_t coded_ = 0;
  proto::ReplayWindow window_seen_;
  std::size_t history_words_ = 16;
};

struct Fixture {
  explicit Fixture(std::uint32_t segments, double redundancy = 0.05, std::uint32_t symbol_size = 48,
                   std::uint64_t bitrate = 0)
      : coder(make_engine_chunk_coder(engine)), cache(*coder, 8 << 20) {
    info = {"movie", stream_id_of("movie"), 9, 64, symbol_size, bitrate, false};
    stream = std::make_unique<MediaStream>(info, cache);
    media.resize(segments * stream->segment_bytes() - 1000);
    for (auto& b : media) b = static_cast<std::uint8_t>(rng());
    for (std::size_t off = 0; off < media.size(); off += stream->segment_bytes())
      stream->append({media.data() + off, std::min(stream->segment_bytes(), media.size() - off)});
    stream->finish();
    keys = test_keys(rng);
    config.window = 4;
    config.rate = 1e9;
    config.redundancy = redundancy;
    seals = std::make_unique<OriginSeals>(identity, *stream);
    config.seals = seals.get();
    shared = std::make_unique<SharedSymbols>(*stream, proto::Suite::aes128_gcm, 8 << 20);
    config.shared = shared.get();
  }
  std::mt19937_64 rng{21};
  CpuEngine engine;
  std::unique_ptr<ChunkCoder> coder;
  CodedCache cache;
  StreamInfo info;
  std::unique_ptr<MediaStream> stream;
  proto::Ed25519Identity identity = proto::Ed25519Identity::generate();
  std::unique_ptr<OriginSeals> seals;
  std::unique_ptr<SharedSymbols> shared;
  std::vector<std::uint8_t> media;
  proto::SessionKeys keys;
  SessionConfig config;
  NullObserver observer;
};

// Runs the exchange in 1 ms steps from `start` with loss p on the server-to-peer path. The session sends
// what its pacing allows; the peer ACKs as docs/protocol.md asks: at once at a segment's full rank, after
// every 16 CODED packets, and at the end of each step (its delayed ACK). Returns the octets sent.
inline std::size_t exchange(Fixture& f, Session& s, SimPeer& peer, double p, int max_steps,
                            TimePoint start = TimePoint{} + 1s) {
  std::bernoulli_distribution lost(p);
  TimePoint t = start;
  std::vector<std::uint8_t> buf(proto::kMinDatagram);
  std::size_t bytes = 0;
  auto ack = [&] {
    auto a = peer.ack();
    const auto in = s.receive(a, *proto::parse_header(a), t);
    EXPECT_FALSE(in.drop) << proto::to_string(*in.drop);
  };
  ack();
  for (int step = 0; step < max_steps && !peer.complete(f.stream->segment_count()); ++step) {
    s.refill(t);
    int unacked = 0;
    while (s.can_send(1200)) {
      const std::size_t len = s.next_packet(buf, t);
      if (len == 0) break;
      s.spend(len);
      bytes += len;
      if (lost(f.rng)) continue;
      const auto full_before = peer.full_rank();
      peer.deliver({buf.begin(), buf.begin() + static_cast<long>(len)});
      if (peer.full_rank() != full_before || ++unacked == 16) {
        ack();
        unacked = 0;
      }
    }
    ack();
    t += 1ms;
  }
  return bytes;
}

}  // namespace ncast::server::session_sim
