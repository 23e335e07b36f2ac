// ACK bodies: the layout and ranges, the optional history after the entries and what it acknowledges.
#include <gtest/gtest.h>

#include <vector>

#include "protocol/packets.hpp"
#include "tests/protocol/test_util.hpp"

namespace ncast::proto {
namespace {

using testing::hex;

TEST(Packets, AckRoundTripAndRejections) {
  AckBody a;
  a.largest = 123456789012ull;
  a.ack_delay_us = 250;
  a.received = 99;
  a.known = 30;
  a.next_needed = 4;
  a.flags = 0;
  a.entries = {{4, 17, false}, {5, 128, true}, {9, 3, false}};
  std::vector<std::uint8_t> buf(600);
  Writer w(buf);
  write_body(w, a);
  buf.resize(w.size());
  EXPECT_EQ(buf.size(), 26u + 3 * 8);
  EXPECT_EQ(to_hex(std::span(buf).subspan(26, 8)),
            "00000004"
            "0011"
            "00"
            "00");
  auto back = decode_ack_body(buf);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->entries, a.entries);
  EXPECT_EQ(back->largest, a.largest);
  for (std::size_t len = 0; len < buf.size(); ++len) EXPECT_FALSE(decode_ack_body(std::span(buf).first(len)));
  auto encode_ack = [](const AckBody& x) {
    std::vector<std::uint8_t> o(1200);
    Writer ow(o);
    write_body(ow, x);
    o.resize(ow.size());
    return o;
  };
  AckBody m = a;
  m.entries[1].segment = 4;  // duplicate
  EXPECT_FALSE(decode_ack_body(encode_ack(m)));
  m = a;
  m.entries[0].segment = 3;  // below next_needed
  EXPECT_FALSE(decode_ack_body(encode_ack(m)));
  m = a;
  m.entries[2].rank = 257;
  EXPECT_FALSE(decode_ack_body(encode_ack(m)));
  m = a;
  m.flags = ack_flags::complete | ack_flags::final_seen;
  EXPECT_TRUE(decode_ack_body(encode_ack(m)));
  m.flags = 4;
  EXPECT_FALSE(decode_ack_body(encode_ack(m)));
  auto bad_state = buf;
  bad_state[26 + 6] = 2;
  EXPECT_FALSE(decode_ack_body(bad_state));
}

// How many of the last packets up to the largest an ACK acknowledges, as counting acknowledges() would.
TEST(Packets, AcknowledgedOfLastCountsTheHistory) {
  AckBody a;
  a.largest = 1000;
  a.history = {0b101, ~0ull, 0x8000000000000000ull};
  const auto counted = [&](std::uint64_t span) {
    std::uint64_t n = 0;
    for (std::uint64_t i = 0; i < span; ++i) n += acknowledges(a, a.largest - i);
    return n;
  };
  for (const std::uint64_t span : {0, 1, 2, 3, 4, 64, 65, 66, 100, 129, 192, 193})
    EXPECT_EQ(acknowledged_of_last(a, span), counted(span)) << "span " << span;
  EXPECT_EQ(acknowledged_of_last(a, 1), 1u);
  EXPECT_EQ(acknowledged_of_last(a, 4), 3u);     // 1000, 999, 997
  EXPECT_EQ(acknowledged_of_last(a, 193), 68u);  // and all of word 1, and word 2's bit 63
}

// The optional history after the entries (issue 20): a word count and the words; what a peer without
// it sends still decodes, with an empty history that acknowledges every number up to largest.
TEST(Packets, AckHistoryRoundTripAndRejections) {
  AckBody a;
  a.largest = 1000;
  a.next_needed = 2;
  a.entries = {{2, 5, false}};
  a.history = {0b101, 0, 0x8000000000000000ull};
  std::vector<std::uint8_t> buf(1200);
  Writer w(buf);
  write_body(w, a);
  buf.resize(w.size());
  EXPECT_EQ(buf.size(), 26u + 8 + 1 + 3 * 8);
  EXPECT_EQ(buf[34], 3);
  auto back = decode_ack_body(buf);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->history, a.history);
  EXPECT_TRUE(acknowledges(*back, 1000));
  EXPECT_TRUE(acknowledges(*back, 999));              // bit 0
  EXPECT_FALSE(acknowledges(*back, 998));             // bit 1
  EXPECT_TRUE(acknowledges(*back, 997));              // bit 2
  EXPECT_TRUE(acknowledges(*back, 1000 - 1 - 191));   // word 2, bit 63
  EXPECT_FALSE(acknowledges(*back, 1000 - 1 - 192));  // beyond the history
  EXPECT_FALSE(acknowledges(*back, 1001));
  for (std::size_t len = 35; len < buf.size(); ++len) EXPECT_FALSE(decode_ack_body(std::span(buf).first(len)));
  auto zero_words = buf;
  zero_words.resize(35);
  zero_words[34] = 0;
  EXPECT_FALSE(decode_ack_body(zero_words));
  a.history.assign(kMaxAckHistoryWords + 1, 0);
  std::vector<std::uint8_t> big(1200);
  Writer bw(big);
  write_body(bw, a);
  EXPECT_FALSE(bw.ok());
  AckBody old = a;
  old.history.clear();
  EXPECT_TRUE(acknowledges(old, 3));
}

}  // namespace
}  // namespace ncast::proto
