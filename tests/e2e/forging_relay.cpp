// A hostile relay for the descriptor-trust tests (issue 20), an implementation of the wire protocol of
// its own: it serves a stream of the origin's name whose segments are those of --file (the attacker's
// text), sending its whole segment table at once right after the MANIFEST, so that its descriptors
// arrive before the origin's, and then the source symbols of every segment a peer still wants.
//
//   forging_relay --origin PORT --stream NAME --file PATH [--symbols N] [--symbol-size L] [--own-origin]
//                 [--start S]
//
// Its MANIFEST carries the origin's genuine stream certificate, fetched by joining the origin on
// 127.0.0.1:PORT as a peer would, and its batches a seal of its own key (it has no other); with
// --own-origin it certifies and seals the stream under its own key instead, posing as an origin. With
// --start it starts every session at segment S, whatever the peer asked, to leave out the ones before.
// Prints the "listening" line of ncast-server (and takes, and ignores, --listen and --metrics).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "protocol/coded_seal.hpp"
#include "protocol/handshake.hpp"
#include "protocol/segment_seal.hpp"

namespace {

using namespace ncast;
using Clock = std::chrono::steady_clock;

struct Options {
  std::uint16_t origin = 0;
  std::string stream, file;
  std::uint16_t n = 128;
  std::uint32_t symbol_size = 1024;
  bool own_origin = false;
  std::uint32_t start = 0;  // the MANIFEST's start_segment, whatever was asked
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc || (i < argc && std::string(argv[i]) == "--own-origin"); ++i) {
    const std::string a = argv[i];
    if (a == "--own-origin") o.own_origin = true;
    else if (a == "--origin") o.origin = static_cast<std::uint16_t>(std::stoi(argv[++i]));
    else if (a == "--stream") o.stream = argv[++i];
    else if (a == "--file") o.file = argv[++i];
    else if (a == "--start") o.start = static_cast<std::uint32_t>(std::stoul(argv[++i]));
    else if (a == "--symbols") o.n = static_cast<std::uint16_t>(std::stoi(argv[++i]));
    else if (a == "--symbol-size") o.symbol_size = static_cast<std::uint32_t>(std::stoul(argv[++i]));
    else ++i;  // --listen, --metrics
  }
  if (o.stream.empty() || o.file.empty() || o.origin == 0)
    throw std::invalid_argument("usage: forging_relay --origin PORT --stream NAME --file PATH [--own-origin]");
  return o;
}

class Socket {
 public:
  Socket() {
    fd_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
  }
  ~Socket() { ::close(fd_); }
  std::uint16_t port() const {
    sockaddr_in a{};
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    return ntohs(a.sin_port);
  }
  void send(const std::vector<std::uint8_t>& d, std::uint16_t port) const {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::sendto(fd_, d.data(), d.size(), 0, reinterpret_cast<sockaddr*>(&a), sizeof a);
  }
  // The next datagram within timeout_ms, and the port it came from.
  std::optional<std::pair<std::vector<std::uint8_t>, std::uint16_t>> receive(int timeout_ms) const {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) <= 0) return std::nullopt;
    std::vector<std::uint8_t> buf(65536);
    sockaddr_in from{};
    socklen_t len = sizeof from;
    const ssize_t n = ::recvfrom(fd_, buf.data(), buf.size(), 0, reinterpret_cast<sockaddr*>(&from), &len);
    if (n <= 0) return std::nullopt;
    buf.resize(static_cast<std::size_t>(n));
    return std::make_pair(std::move(buf), ntohs(from.sin_port));
  }

 private:
  int fd_ = -1;
};

// The origin's MANIFEST body, as any peer gets it: the genuine certificate is public.
proto::ManifestBody origin_manifest(std::uint16_t origin, const std::string& stream) {
  Socket s;
  proto::Join wanted;
  wanted.stream = stream;
  proto::PeerHandshake handshake(wanted);
  s.send(handshake.hello(), origin);
  for (const auto end = Clock::now() + std::chrono::seconds(5); Clock::now() < end;) {
    auto got = s.receive(100);
    if (!got) continue;
    auto& d = got->first;
    const auto prefix = proto::parse_prefix(d);
    if (prefix && prefix->type == proto::PacketType::retry) {
      if (auto retry = proto::decode_retry(d))
        if (auto join = handshake.on_retry(*retry)) s.send(*join, origin);
    } else if (prefix && prefix->type == proto::PacketType::manifest) {
      if (auto accepted = handshake.on_manifest(d, std::nullopt)) return accepted->body;
    }
  }
  throw std::runtime_error("the origin did not answer");
}

struct Segment {
  proto::SegmentDescriptor descriptor;
  std::vector<std::uint8_t> block;  // zero-padded to n_s symbols
};

std::vector<Segment> cut(const Options& o) {
  std::ifstream in(o.file, std::ios::binary);
  const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::size_t segment = std::size_t{o.n} * o.symbol_size;
  std::vector<Segment> out;
  for (std::size_t off = 0; off < bytes.size(); off += segment) {
    const std::size_t size = std::min(segment, bytes.size() - off);
    Segment s;
    s.descriptor.size = static_cast<std::uint32_t>(size);
    s.descriptor.hash = proto::sha256({bytes.data() + off, size});
    s.block.assign(bytes.begin() + static_cast<long>(off), bytes.begin() + static_cast<long>(off + size));
    s.block.resize((size + o.symbol_size - 1) / o.symbol_size * o.symbol_size, 0);
    out.push_back(std::move(s));
  }
  return out;
}

struct Session {
  std::uint64_t id = 0;
  std::uint16_t port = 0;
  std::optional<proto::Aead> seal, open;
  std::optional<proto::Cmac> coded_mac;
  std::uint64_t number = 1;
  std::uint32_t next_needed = 0;
  std::uint16_t window = 8;
  std::set<std::uint32_t> decoded;
  bool acked = false;
};

class ForgingRelay {
 public:
  ForgingRelay(const Options& o, proto::ManifestBody stream) : o_(o), stream_(std::move(stream)), table_(cut(o)) {
    if (o.own_origin) {
      stream_.origin = identity_.public_key();
      stream_.certificate = proto::certify(identity_, proto::stream_identity(stream_));
    }
  }
  std::uint16_t port() const { return socket_.port(); }

  void run() {
    auto next_round = Clock::now();
    for (;;) {
      if (auto got = socket_.receive(5)) on_datagram(got->first, got->second);
      if (Clock::now() < next_round) continue;
      next_round = Clock::now() + std::chrono::milliseconds(20);
      for (auto& [id, s] : sessions_) send_window(s);
    }
  }

 private:
  void on_datagram(std::vector<std::uint8_t>& d, std::uint16_t from) {
    const auto prefix = proto::parse_prefix(d);
    if (!prefix) return;
    if (prefix->type == proto::PacketType::hello) {
      if (auto hello = proto::decode_hello(d)) socket_.send(proto::encode(proto::Retry{hello->nonce, {1, 2, 3}}), from);
    } else if (prefix->type == proto::PacketType::join) {
      if (auto join = proto::decode_join(d)) on_join(d, *join, from);
    } else if (prefix->type == proto::PacketType::ack || prefix->type == proto::PacketType::bye) {
      on_protected(d);
    }
  }

  void on_join(std::span<const std::uint8_t> d, const proto::Join& join, std::uint16_t from) {
    proto::ManifestBody body = stream_;
    body.server_id = 0x0BAD0BAD;
    body.segment_count = static_cast<std::uint32_t>(table_.size());
    body.stream_flags = static_cast<std::uint8_t>(body.stream_flags | proto::stream_flags::final);
    body.start_segment = o_.start;
    body.window = join.window;
    body.share = join.share;
    body.session_flags = proto::join_flags::systematic;
    body.max_datagram = join.max_datagram;
    body.stream_suite = static_cast<std::uint8_t>(stream_key_.suite);
    body.stream_key = stream_key_.key;
    const std::uint64_t id = 0x5EED0000ULL + from;
    auto accepted = proto::server_accept(d, join, identity_, proto::Suite::aes128_gcm, id, body);
    if (!accepted) return;
    sessions_.erase(id);
    Session& s = sessions_[id];
    s.id = id;
    s.port = from;
    s.window = join.window;
    s.seal.emplace(accepted->keys.suite, accepted->keys.server_key, accepted->keys.server_iv,
                   proto::Aead::Direction::seal);
    s.open.emplace(accepted->keys.suite, accepted->keys.peer_key, accepted->keys.peer_iv, proto::Aead::Direction::open);
    s.coded_mac.emplace(accepted->keys.coded_mac);
    socket_.send(accepted->manifest, from);
    send_table(s);
  }

  // Every descriptor at once, in batches sealed with this relay's key over the attacker's table.
  void send_table(Session& s) {
    const std::size_t per = proto::descriptors_per_packet(proto::kMinDatagram);
    proto::Sha256Digest chain = proto::chain_start(proto::stream_identity(stream_));
    for (std::size_t first = 0; first < table_.size(); first += per) {
      proto::SegmentsBody b;
      b.first = static_cast<std::uint32_t>(first);
      b.segment_count = static_cast<std::uint32_t>(table_.size());
      for (std::size_t i = first; i < std::min(table_.size(), first + per); ++i) {
        b.descriptors.push_back(table_[i].descriptor);
        chain = proto::chain_next(chain, static_cast<std::uint32_t>(i), table_[i].descriptor);
      }
      const bool final = first + b.descriptors.size() == table_.size();
      b.stream_flags = final ? proto::stream_flags::final : 0;
      b.seal = proto::seal_table(identity_, static_cast<std::uint32_t>(first + b.descriptors.size()), final, chain);
      send(s, proto::PacketType::segments, [&](proto::Writer& w) { proto::write_body(w, b); });
    }
  }

  void on_protected(std::vector<std::uint8_t>& d) {
    const auto header = proto::parse_header(d);
    if (!header) return;
    const auto it = sessions_.find(header->session);
    if (it == sessions_.end()) return;
    Session& s = it->second;
    const auto body = proto::open_packet(d, *header, *s.open);
    if (!body) return;
    if (header->type == proto::PacketType::bye) return void(sessions_.erase(it));
    const auto ack = proto::decode_ack_body(*body);
    if (!ack) return;
    s.acked = true;
    s.next_needed = ack->next_needed;
    for (const auto& e : ack->entries)
      if (e.decoded) s.decoded.insert(e.segment);
    if (ack->known < table_.size()) send_table(s);
  }

  // The source symbols of every segment of the peer's window it has not decoded.
  void send_window(Session& s) {
    if (!s.acked) return;
    const std::uint32_t end =
        std::min<std::uint32_t>(static_cast<std::uint32_t>(table_.size()), s.next_needed + s.window);
    for (std::uint32_t seg = s.next_needed; seg < end; ++seg) {
      if (s.decoded.count(seg)) continue;
      const auto& block = table_[seg].block;
      for (std::uint32_t i = 0; i * o_.symbol_size < block.size(); ++i) send_systematic(s, seg, i, block);
    }
  }

  // Source symbol i under this relay's stream key, then the session's header and authenticator.
  void send_systematic(Session& s, std::uint32_t seg, std::uint32_t i, const std::vector<std::uint8_t>& block) {
    std::vector<std::uint8_t> shared(proto::kCodedHeaderSize + o_.symbol_size + proto::kTagSize);
    proto::Writer w(shared);
    proto::write_coded_header(w, {seg, proto::WireKind::systematic, proto::kDenseWire, i});
    w.bytes(std::span(block).subspan(std::size_t{i} * o_.symbol_size, o_.symbol_size));
    proto::seal_shared(stream_seal_, shared);
    std::vector<std::uint8_t> out(proto::kMaxDatagram);
    out.resize(proto::write_coded_packet(
        out, proto::coded_envelope(*s.coded_mac, s.id, s.number, proto::sha256(shared)), shared));
    ++s.number;
    socket_.send(out, s.port);
  }

  template <typename Body>
  void send(Session& s, proto::PacketType type, Body&& body) {
    std::vector<std::uint8_t> out(proto::kMaxDatagram);
    const std::size_t len = proto::seal_packet(out, {type, s.id, s.number}, *s.seal, body);
    if (len == 0) return;
    ++s.number;
    out.resize(len);
    socket_.send(out, s.port);
  }

  Options o_;
  proto::Ed25519Identity identity_ = proto::Ed25519Identity::generate();
  proto::ManifestBody stream_;
  proto::StreamKey stream_key_ = proto::StreamKey::generate(proto::Suite::aes128_gcm);
  proto::Aead stream_seal_ = proto::stream_aead(stream_key_, proto::Aead::Direction::seal);
  std::vector<Segment> table_;
  Socket socket_;
  std::map<std::uint64_t, Session> sessions_;
};

}  // namespace

int main(int argc, char** argv) try {
  const Options o = parse(argc, argv);
  ForgingRelay relay(o, origin_manifest(o.origin, o.stream));
  const nlohmann::json j{{"event", "listening"}, {"port", relay.port()}, {"metrics", nullptr}};
  std::printf("%s\n", j.dump().c_str());
  std::fflush(stdout);
  relay.run();
} catch (const std::exception& e) {
  std::cerr << "forging_relay: " << e.what() << "\n";
  return 2;
}
