// Issue 20's attack on real processes: a peer pulls from the origin and from a relay that sends its own
// segment table at once (segments 40-63 the attacker's text), before the origin's. The relay is a wire
// implementation of its own (forging_relay.cpp). Whether it is listed first or second, the peer writes
// the origin's stream, convicts the relay and keeps the origin; the same when the relay starts the file
// late; a pinned --origin-key admits no other origin; a relay posing as an origin of its own ends an
// unpinned peer's run without output.
#include <gtest/gtest.h>

#include "tests/e2e/e2e_support.hpp"

namespace ncast::e2e {
namespace {

std::string addr(std::uint16_t port) { return "127.0.0.1:" + std::to_string(port); }

constexpr std::size_t kSegment = 16 * 1024;  // --symbols 16, 1024-octet symbols

// The origin serving 64 segments, and a forging relay of the same stream whose segments 40-63 differ.
struct Attack {
  explicit Attack(std::vector<std::string> relay_args = {}) {
    genuine = random_bytes(64 * kSegment - 100, 20);
    auto forged = genuine;
    for (std::size_t i = 40 * kSegment; i < forged.size(); ++i) forged[i] = static_cast<std::uint8_t>('A' + i % 26);
    write_file(dir / "m", genuine);
    write_file(dir / "attacker", forged);
    origin = start_server(dir, "origin", {"--file", (dir / "m").string(), "--symbols", "16", "--stats-interval", "0"});
    std::vector<std::string> args{"--origin", std::to_string(origin.port), "--stream",  "m",
                                  "--file",   (dir / "attacker").string(), "--symbols", "16"};
    args.insert(args.end(), relay_args.begin(), relay_args.end());
    relay = start_server(dir, "relay", args, "127.0.0.1:0", NCAST_FORGER_BIN);
  }
  std::string origin_key() const { return origin.listening["identity"].get<std::string>(); }
  PeerResult fetch(const std::string& tag, bool relay_first, std::vector<std::string> extra = {}) {
    const std::string o = addr(origin.port), r = addr(relay.port);
    std::vector<std::string> args{"-s", relay_first ? r : o, "-s", relay_first ? o : r, "--stream", "m",
                                  "-o", (dir / tag).string()};
    args.insert(args.end(), extra.begin(), extra.end());
    auto peer = start_peer(dir, tag, args);
    return finish(*peer);
  }

  TempDir dir;
  std::vector<std::uint8_t> genuine;
  ServerProc origin, relay;
};

const Json& link(const PeerResult& r, std::size_t i) { return r.report["servers"][i]; }

TEST(HostileRelay, ForgedDescriptorsLoseWhetherTheRelayIsListedFirstOrSecond) {
  Attack a;
  for (const bool relay_first : {true, false}) {
    const std::string tag = relay_first ? "relay-first" : "relay-second";
    const auto r = a.fetch(tag, relay_first);
    const std::size_t relay = relay_first ? 0 : 1, origin = 1 - relay;
    EXPECT_EQ(r.code, 0) << tag << ": " << r.report.dump();
    EXPECT_TRUE(r.report["complete"].get<bool>()) << tag;
    EXPECT_TRUE(read_bytes(a.dir / tag) == a.genuine) << tag << ": the output is not the origin's stream";
    EXPECT_EQ(r.report["forgers"], 1) << tag << ": " << r.report.dump();
    EXPECT_TRUE(link(r, relay).value("forged", false)) << tag << ": " << r.report.dump();
    EXPECT_NE(link(r, relay).value("failure", "").find("forged"), std::string::npos) << tag;
    EXPECT_FALSE(link(r, origin).contains("failure")) << tag << ": the origin link was dropped: " << r.report.dump();
    EXPECT_EQ(r.report["origin"]["keys"][0], a.origin_key()) << tag;
  }
}

// The relay tells the peer that the file starts at segment 40: it would write 40-63 alone, exit 0.
TEST(HostileRelay, ARelayCannotStartAFileLaterThanAsked) {
  Attack a({"--start", "40"});
  for (const bool relay_first : {true, false}) {
    const std::string tag = relay_first ? "late-first" : "late-second";
    const auto r = a.fetch(tag, relay_first);
    EXPECT_EQ(r.code, 0) << tag << ": " << r.report.dump();
    EXPECT_TRUE(read_bytes(a.dir / tag) == a.genuine) << tag;
    EXPECT_NE(link(r, relay_first ? 0 : 1).value("failure", "").find("starts a file stream at segment 40"),
              std::string::npos)
        << tag << ": " << r.report.dump();
    EXPECT_EQ(r.report["forgers"], 1) << tag;
  }
}

TEST(HostileRelay, APinnedOriginKeyRefusesAnyOtherOriginClearly) {
  Attack a({"--own-origin"});
  const std::string other(64, 'a');
  auto lone = start_peer(
      a.dir, "wrong-pin",
      {"-s", addr(a.origin.port), "--stream", "m", "-o", (a.dir / "wrong-pin").string(), "--origin-key", other});
  const auto wrong = finish(*lone);
  EXPECT_NE(wrong.code, 0);
  EXPECT_NE(wrong.report.value("failure", "").find("origin key mismatch: expected " + other), std::string::npos)
      << wrong.report.dump();
  EXPECT_FALSE(std::filesystem::exists(a.dir / "wrong-pin"));
  // A relay posing as an origin under its own key: refused by the pin, whichever comes first.
  for (const bool relay_first : {true, false}) {
    const std::string tag = relay_first ? "pinned-relay-first" : "pinned-relay-second";
    const auto r = a.fetch(tag, relay_first, {"--origin-key", a.origin_key()});
    EXPECT_EQ(r.code, 0) << tag << ": " << r.report.dump();
    EXPECT_TRUE(read_bytes(a.dir / tag) == a.genuine) << tag;
    EXPECT_NE(link(r, relay_first ? 0 : 1).value("failure", "").find("origin key mismatch"), std::string::npos)
        << tag << ": " << r.report.dump();
    EXPECT_FALSE(link(r, relay_first ? 1 : 0).contains("failure")) << tag << ": " << r.report.dump();
  }
}

TEST(HostileRelay, UnpinnedTwoOriginsThatDisagreeEndTheRunWithoutOutput) {
  Attack a({"--own-origin"});
  for (const bool relay_first : {true, false}) {
    const std::string tag = relay_first ? "posing-first" : "posing-second";
    const auto r = a.fetch(tag, relay_first);
    EXPECT_NE(r.code, 0) << tag << ": " << r.report.dump();
    EXPECT_NE(r.report.value("failure", "").find("origins disagree"), std::string::npos)
        << tag << ": " << r.report.dump();
    EXPECT_FALSE(std::filesystem::exists(a.dir / tag)) << tag << ": an output was kept";
  }
}

}  // namespace
}  // namespace ncast::e2e
