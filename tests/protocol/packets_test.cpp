// Packet codecs (ACK bodies: ack_packets_test.cpp): round trips of every type, the exact layouts of docs/protocol.md
// checked octet by octet on hand-built datagrams, and rejection of truncated, oversized, wrong-version, wrong-magic,
// out-of-range and trailing-garbage input. Random mutations must never crash a decoder.
#include "protocol/packets.hpp"

#include <gtest/gtest.h>

#include <random>

#include "tests/protocol/test_util.hpp"

namespace ncast::proto {
namespace {

using testing::hex;

Nonce make_nonce(std::mt19937_64& rng) {
  Nonce n{};
  for (auto& b : n) b = static_cast<std::uint8_t>(rng());
  return n;
}

Join sample_join(std::mt19937_64& rng) {
  Join j;
  j.nonce = make_nonce(rng);
  j.token = testing::random_bytes_of(20, rng);
  for (auto& b : j.peer_public) b = static_cast<std::uint8_t>(rng());
  j.stream = "movie.ts";
  j.start_segment = 7;
  j.window = 12;
  j.share = 500;
  j.flags = join_flags::systematic | join_flags::download;
  j.max_datagram = 9000;
  j.max_rate_kbps = 123456;
  j.suites = {2, 1};
  return j;
}

TEST(Packets, HelloLayoutAndRoundTrip) {
  std::mt19937_64 rng(1);
  Hello h;
  h.nonce = make_nonce(rng);
  h.stream = "live";
  const auto d = encode(h);
  ASSERT_EQ(d.size(), kMinHelloSize);
  EXPECT_EQ(to_hex(std::span(d).first(4)), "4e430201");
  EXPECT_TRUE(std::equal(h.nonce.begin(), h.nonce.end(), d.begin() + 4));
  EXPECT_EQ(d[20], 4);
  EXPECT_EQ(std::string(d.begin() + 21, d.begin() + 25), "live");
  auto back = decode_hello(d);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->nonce, h.nonce);
  EXPECT_EQ(back->stream, "live");
  EXPECT_EQ(encode(h, 1200).size(), 1200u);
  EXPECT_TRUE(decode_hello(encode(h, 1200)));
}

TEST(Packets, HelloRejections) {
  std::mt19937_64 rng(2);
  Hello h;
  h.nonce = make_nonce(rng);
  h.stream = "s";
  auto d = encode(h);
  EXPECT_EQ(decode_hello(std::span(d).first(63)).error(), DropReason::truncated);
  auto big = encode(h, 1200);
  big.push_back(0);
  EXPECT_EQ(decode_hello(big).error(), DropReason::oversized);
  auto bad = d;
  bad[63] = 1;  // non-zero padding
  EXPECT_EQ(decode_hello(bad).error(), DropReason::malformed);
  bad = d;
  bad[2] = 1;
  EXPECT_EQ(decode_hello(bad).error(), DropReason::bad_version);
  bad = d;
  bad[0] = 0x4F;
  EXPECT_EQ(decode_hello(bad).error(), DropReason::bad_magic);
  bad = d;
  bad[20] = 0;  // empty name
  EXPECT_EQ(decode_hello(bad).error(), DropReason::malformed);
  bad = d;
  bad[20] = 200;  // name longer than the datagram
  EXPECT_EQ(decode_hello(bad).error(), DropReason::malformed);
  EXPECT_THROW(encode(Hello{}), std::invalid_argument);
}

TEST(Packets, RetryRoundTripAndRejections) {
  std::mt19937_64 rng(3);
  Retry r{make_nonce(rng), testing::random_bytes_of(20, rng)};
  const auto d = encode(r);
  EXPECT_EQ(d.size(), 4u + 16 + 1 + 20);
  auto back = decode_retry(d);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->nonce, r.nonce);
  EXPECT_EQ(back->token, r.token);
  for (std::size_t len = 0; len < d.size(); ++len) EXPECT_FALSE(decode_retry(std::span(d).first(len))) << len;
  auto longer = d;
  longer.push_back(0);
  EXPECT_EQ(decode_retry(longer).error(), DropReason::malformed);
  auto zero_token = d;
  zero_token[20] = 0;
  zero_token.resize(21);
  EXPECT_EQ(decode_retry(zero_token).error(), DropReason::malformed);
}

TEST(Packets, JoinLayoutRoundTripAndRanges) {
  std::mt19937_64 rng(4);
  const Join j = sample_join(rng);
  const auto d = encode(j);
  // prefix 4, nonce 16, token 1+20, key 32, name 1+8, start 4, window 2, share 2, flags 1, dgram 2, rate 4, suites 1+2
  ASSERT_EQ(d.size(), 4u + 16 + 21 + 32 + 9 + 4 + 2 + 2 + 1 + 2 + 4 + 3);
  std::size_t at = 4 + 16 + 21 + 32 + 9;
  EXPECT_EQ(to_hex(std::span(d).subspan(at, 4 + 2 + 2 + 1 + 2 + 4 + 3)), "00000007000c01f40323280001e240020201");
  auto back = decode_join(d);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->nonce, j.nonce);
  EXPECT_EQ(back->token, j.token);
  EXPECT_EQ(back->peer_public, j.peer_public);
  EXPECT_EQ(back->stream, j.stream);
  EXPECT_EQ(back->start_segment, 7u);
  EXPECT_EQ(back->window, 12);
  EXPECT_EQ(back->share, 500);
  EXPECT_EQ(back->flags, j.flags);
  EXPECT_EQ(back->max_datagram, 9000);
  EXPECT_EQ(back->max_rate_kbps, 123456u);
  EXPECT_EQ(back->suites, j.suites);
  for (std::size_t len = 0; len < d.size(); ++len) EXPECT_FALSE(decode_join(std::span(d).first(len))) << len;

  auto mutate = [&](auto change) {
    Join m = j;
    change(m);
    return decode_join(encode(m));
  };
  EXPECT_FALSE(mutate([](Join& m) { m.window = 0; }));
  EXPECT_FALSE(mutate([](Join& m) { m.window = 65; }));
  EXPECT_FALSE(mutate([](Join& m) { m.share = 0; }));
  EXPECT_FALSE(mutate([](Join& m) { m.share = 1001; }));
  EXPECT_FALSE(mutate([](Join& m) { m.flags = 4; }));
  EXPECT_FALSE(mutate([](Join& m) { m.max_datagram = 1199; }));
  EXPECT_FALSE(mutate([](Join& m) { m.max_datagram = 65508; }));
  EXPECT_TRUE(mutate([](Join& m) { m.window = 64; }));
  auto padded = d;
  padded.resize(1200, 0);
  EXPECT_TRUE(decode_join(padded));
  EXPECT_EQ(encode(j, kMaxClearSize), padded);
  EXPECT_EQ(encode(j, 5 * kMaxClearSize), padded) << "never past the clear packets' limit";
  padded.back() = 1;
  EXPECT_EQ(decode_join(padded).error(), DropReason::malformed);
  padded.back() = 0;
  padded.push_back(0);
  EXPECT_EQ(decode_join(padded).error(), DropReason::oversized);
}

TEST(Packets, RejectIsVersionIndependent) {
  std::mt19937_64 rng(5);
  Reject r;
  r.version = 9;
  r.nonce = make_nonce(rng);
  r.reason = RejectReason::unsupported_version;
  r.versions = {1, 9};
  const auto d = encode(r);
  EXPECT_EQ(d.size(), 4u + 16 + 1 + 4 + 1 + 2);
  EXPECT_LE(d.size(), 3 * kMinHelloSize);
  auto back = decode_reject(d);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->version, 9);
  EXPECT_EQ(back->reason, RejectReason::unsupported_version);
  EXPECT_EQ(back->versions, r.versions);
  auto bad = d;
  bad[20] = 6;
  EXPECT_EQ(decode_reject(bad).error(), DropReason::malformed);
  bad = d;
  bad.push_back(0);
  EXPECT_EQ(decode_reject(bad).error(), DropReason::malformed);
}

TEST(Packets, RepliesToUnvalidatedAddressesAreUnderThreeTimesAHello) {
  Retry r;
  r.token.assign(kMaxTokenSize, 0xAB);
  EXPECT_LE(encode(r).size() * 1, 3 * kMinHelloSize);
  Reject j;
  j.versions.assign(kMaxVersions, 1);
  EXPECT_LE(encode(j).size(), 3 * kMinHelloSize);
}

TEST(Packets, ProtectedHeader) {
  std::vector<std::uint8_t> d(kHeaderSize + kTagSize + 3);
  Writer w(d);
  write_header(w, {PacketType::ack, 0x0102030405060708ull, 0x1112131415161718ull});
  EXPECT_EQ(to_hex(std::span(d).first(20)),
            "4e430213"
            "0102030405060708"
            "1112131415161718");
  auto h = parse_header(d);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->type, PacketType::ack);
  EXPECT_EQ(h->session, 0x0102030405060708ull);
  EXPECT_EQ(h->number, 0x1112131415161718ull);
  EXPECT_EQ(parse_header(std::span(d).first(kHeaderSize + kTagSize - 1)).error(), DropReason::truncated);
  auto bad = d;
  bad[2] = 1;
  EXPECT_EQ(parse_header(bad).error(), DropReason::bad_version);
  bad = d;
  bad[3] = 0x03;  // JOIN is not protected
  EXPECT_EQ(parse_header(bad).error(), DropReason::bad_type);
  bad = d;
  bad[3] = 0x7F;
  EXPECT_EQ(parse_header(bad).error(), DropReason::bad_type);
  std::vector<std::uint8_t> huge(kMaxDatagram + 1);
  std::copy(d.begin(), d.begin() + 20, huge.begin());
  EXPECT_EQ(parse_header(huge).error(), DropReason::oversized);
}

TEST(Packets, ManifestBodyRoundTripAndRanges) {
  ManifestBody b;
  b.server_id = 3;
  b.stream_id = 0xABCDEF01;
  b.name = "movie";
  b.n = 128;
  b.symbol_size = 1024;
  b.bitrate = 768000;
  b.segment_count = 42;
  b.stream_flags = stream_flags::final;
  b.start_segment = 0;
  b.window = 8;
  b.share = 1000;
  b.session_flags = join_flags::systematic;
  b.rate = 1000000;
  b.max_datagram = 1232;
  b.max_ack_delay_ms = 5;
  b.idle_timeout_ms = 10000;
  b.stream_suite = 2;
  b.stream_key.assign(32, 7);
  std::vector<std::uint8_t> buf(300);
  Writer w(buf);
  write_body(w, b);
  ASSERT_TRUE(w.ok());
  buf.resize(w.size());
  auto back = decode_manifest_body(buf);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->stream_id, b.stream_id);
  EXPECT_EQ(back->name, "movie");
  EXPECT_EQ(back->n, 128);
  EXPECT_EQ(back->segment_count, 42u);
  EXPECT_EQ(back->idle_timeout_ms, 10000u);
  for (std::size_t len = 0; len < buf.size(); ++len) EXPECT_FALSE(decode_manifest_body(std::span(buf).first(len)));
  auto mutate = [&](auto change) {
    ManifestBody m = b;
    change(m);
    std::vector<std::uint8_t> o(300);
    Writer ow(o);
    write_body(ow, m);
    o.resize(ow.size());
    return bool(decode_manifest_body(o));
  };
  EXPECT_FALSE(mutate([](ManifestBody& m) { m.n = 0; }));
  EXPECT_FALSE(mutate([](ManifestBody& m) { m.n = 257; }));
  EXPECT_FALSE(mutate([](ManifestBody& m) { m.symbol_size = 0; }));
  EXPECT_FALSE(mutate([](ManifestBody& m) { m.symbol_size = 1232; }));  // a seeded packet would not fit 1232
  EXPECT_TRUE(mutate([](ManifestBody& m) { m.symbol_size = 1232 - 56; }));
  EXPECT_FALSE(mutate([](ManifestBody& m) { m.stream_suite = 3; }));
  ManifestBody wrong_key = b;
  wrong_key.stream_key.resize(16);  // a ChaCha20 key is 32 octets
  std::vector<std::uint8_t> o(300);
  Writer ow(o);
  write_body(ow, wrong_key);
  EXPECT_FALSE(ow.ok());
  EXPECT_FALSE(mutate([](ManifestBody& m) { m.stream_flags = 4; }));
  EXPECT_FALSE(mutate([](ManifestBody& m) { m.idle_timeout_ms = 0; }));
  EXPECT_FALSE(mutate([](ManifestBody& m) { m.window = 0; }));
}

TEST(Packets, SegmentsRoundTripAndRanges) {
  std::mt19937_64 rng(6);
  SegmentsBody b;
  b.first = 10;
  b.segment_count = 40;
  b.stream_flags = stream_flags::live;
  for (int i = 0; i < 5; ++i) {
    SegmentDescriptor d;
    d.size = 1 + static_cast<std::uint32_t>(rng() % 131072);
    for (auto& x : d.hash) x = static_cast<std::uint8_t>(rng());
    b.descriptors.push_back(d);
  }
  for (auto& x : b.seal) x = static_cast<std::uint8_t>(rng());
  std::vector<std::uint8_t> buf(1200);
  Writer w(buf);
  write_body(w, b);
  buf.resize(w.size());
  EXPECT_EQ(buf.size(), kSegmentsHeaderSize + 5 * kDescriptorSize + kSealSize);
  auto back = decode_segments_body(buf, 131072);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->descriptors, b.descriptors);
  EXPECT_EQ(back->seal, b.seal);
  auto early_final = buf;
  early_final[8] |= stream_flags::final;  // the table cannot end at 15 while 40 segments are known
  EXPECT_FALSE(decode_segments_body(early_final, 131072));
  EXPECT_FALSE(decode_segments_body(buf, 100));  // a size above n·L
  EXPECT_FALSE(decode_segments_body(std::span(buf).first(buf.size() - 1), 131072));
  auto beyond = buf;
  beyond[7] = 12;  // segment_count 12 < first + count
  EXPECT_FALSE(decode_segments_body(beyond, 131072));
  EXPECT_EQ(descriptors_per_packet(1200), (1200u - 20 - 16 - 10 - 64) / 36);
  EXPECT_EQ(descriptors_per_packet(65507), 255u);
}

TEST(Packets, CodedLayoutsAndRejections) {
  std::mt19937_64 rng(7);
  const std::size_t n = 5, L = 16;
  const auto payload = testing::random_bytes_of(L, rng);
  const auto coefs = testing::random_bytes_of(n, rng);
  auto build = [&](CodedHeader h, bool with_coefs) {
    std::vector<std::uint8_t> b(100);
    Writer w(b);
    write_coded_header(w, h);
    if (with_coefs) w.bytes(coefs);
    w.bytes(payload);
    b.resize(w.size());
    return b;
  };
  auto seeded = build({9, WireKind::seeded, 0x7FFF, 0x00010002}, false);
  EXPECT_EQ(to_hex(std::span(seeded).first(12)),
            "00000009"
            "01"
            "00"
            "7fff"
            "00010002");
  EXPECT_EQ(peek_coded_segment(seeded), 9u);
  auto v = decode_coded_body(seeded, n, L);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->header.kind, WireKind::seeded);
  EXPECT_EQ(v->header.density, 0x7FFF);
  EXPECT_EQ(v->header.index, 0x00010002u);
  EXPECT_TRUE(v->coefficients.empty());
  EXPECT_TRUE(std::equal(payload.begin(), payload.end(), v->payload.begin()));

  auto rec = build({9, WireKind::recoded, kDenseWire, 0}, true);
  v = decode_coded_body(rec, n, L);
  ASSERT_TRUE(v);
  EXPECT_TRUE(std::equal(coefs.begin(), coefs.end(), v->coefficients.begin()));
  EXPECT_FALSE(decode_coded_body(rec, n + 1, L));  // wrong n_s: length mismatch

  EXPECT_TRUE(decode_coded_body(build({1, WireKind::systematic, kDenseWire, 4}, false), n, L));
  EXPECT_FALSE(decode_coded_body(build({1, WireKind::systematic, kDenseWire, 5}, false), n, L));  // index ≥ n
  // Explicit kinds number their symbols too: (segment, kind, index) is the stream key's nonce.
  EXPECT_TRUE(decode_coded_body(build({1, WireKind::recoded, kDenseWire, 1}, true), n, L));
  EXPECT_FALSE(decode_coded_body(build({1, WireKind::explicit_coded, 3, 0}, true), n, L));
  auto zero = build({1, WireKind::explicit_coded, kDenseWire, 0}, true);
  std::fill(zero.begin() + 12, zero.begin() + 12 + n, 0);
  EXPECT_FALSE(decode_coded_body(zero, n, L));
  auto kind4 = seeded;
  kind4[4] = 4;
  EXPECT_FALSE(decode_coded_body(kind4, n, L));
  auto reserved = seeded;
  reserved[5] = 1;
  EXPECT_FALSE(decode_coded_body(reserved, n, L));
  for (std::size_t len = 0; len < seeded.size(); ++len)
    EXPECT_FALSE(decode_coded_body(std::span(seeded).first(len), n, L));
  auto longer = seeded;
  longer.push_back(0);
  EXPECT_FALSE(decode_coded_body(longer, n, L));
  EXPECT_EQ(coded_packet_size(0, 1024), 1080u);
  EXPECT_EQ(coded_packet_size(128, 1024), 1208u);
  EXPECT_LE(coded_packet_size(128, 1024), kMinDatagram);
}

TEST(Packets, Bye) {
  std::uint8_t b[1];
  Writer w(b);
  write_body(w, ByeBody{ByeReason::idle_timeout});
  auto back = decode_bye_body(b);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->reason, ByeReason::idle_timeout);
  const std::uint8_t bad[] = {5};
  EXPECT_FALSE(decode_bye_body(bad));
  const std::uint8_t two[] = {0, 0};
  EXPECT_FALSE(decode_bye_body(two));
  EXPECT_FALSE(decode_bye_body({}));
}

TEST(Packets, ByePathTooSlowCarriesTheFigures) {
  std::uint8_t b[9];
  Writer w(b);
  write_body(w, ByeBody{ByeReason::path_too_slow, 250, 768});
  EXPECT_EQ(w.size(), 9u);
  auto back = decode_bye_body(b);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->reason, ByeReason::path_too_slow);
  EXPECT_EQ(back->measured_kbps, 250u);
  EXPECT_EQ(back->needed_kbps, 768u);
  const std::uint8_t short_body[] = {4, 0, 0, 0};
  EXPECT_FALSE(decode_bye_body(short_body));
}

TEST(Packets, SealAndOpen) {
  std::mt19937_64 rng(8);
  const auto key = testing::random_bytes_of(16, rng);
  std::array<std::uint8_t, kIvSize> iv{};
  Aead seal(Suite::aes128_gcm, key, iv, Aead::Direction::seal);
  Aead open(Suite::aes128_gcm, key, iv, Aead::Direction::open);
  std::vector<std::uint8_t> out(1200);
  const Header h{PacketType::bye, 77, 5};
  const std::size_t len = seal_packet(out, h, seal, [](Writer& w) { write_body(w, ByeBody{ByeReason::shutdown}); });
  ASSERT_EQ(len, kHeaderSize + 1 + kTagSize);
  out.resize(len);
  auto header = parse_header(out);
  ASSERT_TRUE(header);
  auto tampered = out;
  tampered[12] ^= 1;  // packet number is authenticated
  auto th = parse_header(tampered);
  EXPECT_FALSE(open_packet(tampered, *th, open));
  auto body = open_packet(out, *header, open);
  ASSERT_TRUE(body);
  EXPECT_EQ(decode_bye_body(*body)->reason, ByeReason::shutdown);
  std::vector<std::uint8_t> tiny(10);
  EXPECT_EQ(seal_packet(tiny, h, seal, [](Writer&) {}), 0u);
}

// A dispatcher parses the prefix once and hands it on: every decoder must decide exactly as it does
// when it parses the prefix itself, and must not trust a prefix that does not fit the datagram.
template <typename T>
void expect_same(const Parsed<T>& own, const Parsed<T>& given, const std::vector<std::uint8_t>& d) {
  ASSERT_EQ(static_cast<bool>(own), static_cast<bool>(given)) << to_hex(d);
  if (!own) {
    EXPECT_EQ(own.error(), given.error()) << to_hex(d);
  }
}

TEST(Packets, DecodersGivenTheParsedPrefixDecideAsOnTheirOwn) {
  std::mt19937_64 rng(10);
  Hello h;
  h.nonce = make_nonce(rng);
  h.stream = "x";
  std::vector<std::vector<std::uint8_t>> seeds = {encode(h), encode(Retry{make_nonce(rng), {1, 2, 3}}),
                                                  encode(sample_join(rng)), encode(Reject{})};
  std::vector<std::uint8_t> header(kHeaderSize + kTagSize);
  Writer w(header);
  write_header(w, {PacketType::coded, 5, 6});
  seeds.push_back(header);
  std::size_t compared = 0, valid = 0;
  for (int i = 0; i < 20000; ++i) {
    auto d = seeds[rng() % seeds.size()];
    if (i >= static_cast<int>(seeds.size())) d[rng() % d.size()] = static_cast<std::uint8_t>(rng());
    if (rng() % 4 == 0) d.resize(kPrefixSize + rng() % d.size());
    const auto prefix = parse_prefix(d);
    if (!prefix) continue;
    ++compared;
    valid += decode_hello(*prefix, d) || decode_retry(*prefix, d) || decode_join(*prefix, d) ||
             decode_reject(*prefix, d) || parse_header(*prefix, d);
    expect_same(decode_hello(d), decode_hello(*prefix, d), d);
    expect_same(decode_retry(d), decode_retry(*prefix, d), d);
    expect_same(decode_join(d), decode_join(*prefix, d), d);
    expect_same(decode_reject(d), decode_reject(*prefix, d), d);
    expect_same(parse_header(d), parse_header(*prefix, d), d);
  }
  EXPECT_GT(compared, 10000u);
  EXPECT_GT(valid, 0u);
  // A prefix of another type is refused, and a prefix with a datagram too short to hold it is not read.
  const auto join = encode(sample_join(rng));
  const Prefix hello_prefix{kVersion, PacketType::hello};
  EXPECT_EQ(decode_join(hello_prefix, join).error(), DropReason::bad_type);
  const std::vector<std::uint8_t> short_datagram(kPrefixSize - 1, 0x4E);
  EXPECT_EQ(decode_retry(Prefix{kVersion, PacketType::retry}, short_datagram).error(), DropReason::truncated);
  EXPECT_EQ(decode_reject(Prefix{kVersion, PacketType::reject}, short_datagram).error(), DropReason::truncated);
  EXPECT_EQ(decode_join(Prefix{kVersion, PacketType::join}, short_datagram).error(), DropReason::truncated);
  EXPECT_EQ(parse_header(Prefix{kVersion, PacketType::ack}, short_datagram).error(), DropReason::truncated);
}

TEST(Packets, RandomMutationsNeverCrash) {
  std::mt19937_64 rng(9);
  std::vector<std::vector<std::uint8_t>> seeds;
  Hello h;
  h.nonce = make_nonce(rng);
  h.stream = "x";
  seeds.push_back(encode(h));
  seeds.push_back(encode(Retry{make_nonce(rng), {1, 2, 3}}));
  seeds.push_back(encode(sample_join(rng)));
  seeds.push_back(encode(Reject{}));
  std::size_t accepted = 0;
  for (int i = 0; i < 20000; ++i) {
    auto d = seeds[rng() % seeds.size()];
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      switch (rng() % 3) {
        case 0: d[rng() % d.size()] = static_cast<std::uint8_t>(rng()); break;
        case 1: d.resize(rng() % (d.size() + 1)); break;
        case 2: d.push_back(static_cast<std::uint8_t>(rng())); break;
      }
      if (d.empty()) d.push_back(0);
    }
    accepted += decode_hello(d) ? 1 : 0;
    accepted += decode_retry(d) ? 1 : 0;
    accepted += decode_join(d) ? 1 : 0;
    accepted += decode_reject(d) ? 1 : 0;
    (void)parse_header(d);
    (void)decode_ack_body(d);
    (void)decode_segments_body(d, 1 << 20);
    (void)decode_coded_body(d, 1 + rng() % 8, 1 + rng() % 64);
    (void)decode_manifest_body(d);
  }
  EXPECT_GT(accepted, 0u);  // some mutations are still valid packets, so the decoders were exercised
}

}  // namespace
}  // namespace ncast::proto
