#pragma once
// Whose signatures a peer takes its segment table from (docs/protocol.md section 2.11). The origin's
// key is pinned (ncast-peer --origin-key) or learned from an origin session: a session whose server's
// handshake identity is the origin its certificate names. A relay's session names an origin too, but a
// relay cannot vouch for it: its material waits until that key is trusted by one of the two ways.
#include <optional>
#include <string>
#include <vector>

#include "protocol/crypto.hpp"

namespace ncast::peer {

class OriginTrust {
 public:
  explicit OriginTrust(std::optional<proto::PublicKey> pinned = std::nullopt) : pinned_(pinned) {}

  enum class Standing : std::uint8_t { trusted, waiting, refused };
  struct Verdict {
    Standing standing;
    std::string why;  // refused: why
  };
  // A session whose MANIFEST carries a certificate that `origin` signed; `identity` signed its handshake.
  Verdict admit(const proto::PublicKey& identity, const proto::PublicKey& origin);
  bool trusts(const proto::PublicKey& origin) const;

  const std::optional<proto::PublicKey>& pinned() const { return pinned_; }
  // Keys learned from origin sessions (none when pinned), in the order learned.
  const std::vector<proto::PublicKey>& learned() const { return learned_; }

  // Two origins (each trusted, unpinned) signed tables that disagree: only a pin can say which is right.
  void note_conflict(std::string why) {
    if (!conflict_) conflict_ = std::move(why);
  }
  const std::optional<std::string>& conflict() const { return conflict_; }

 private:
  std::optional<proto::PublicKey> pinned_;
  std::vector<proto::PublicKey> learned_;
  std::optional<std::string> conflict_;
};

}  // namespace ncast::peer
