#pragma once
// The origin's signatures over a stream (docs/protocol.md section 2.11): the stream certificate that a
// MANIFEST carries, and the seal that every SEGMENTS batch carries. The seal signs a running hash of the
// segment table, so one signature covers every descriptor from segment 0 to the batch's end and a
// table that keeps growing (a live stream) needs no tree and no re-signing of what was sent. Relays
// forward both unchanged; only the origin's Ed25519 key can make them.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "protocol/crypto.hpp"
#include "protocol/packets.hpp"

namespace ncast::proto {

// What the certificate binds: the fields a peer adopts from the first MANIFEST and checks in every later one.
struct StreamIdentity {
  std::uint32_t stream_id = 0;
  std::string name;
  std::uint16_t n = 0;
  std::uint32_t symbol_size = 0;
  bool live = false;
};
StreamIdentity stream_identity(const ManifestBody& body);

// "ncast stream v1" || u32 stream_id || u8 name_len || name || u16 n || u32 symbol_size || u8 live.
std::vector<std::uint8_t> certificate_message(const StreamIdentity& stream);
// The origin's signature of the certificate message.
Signature certify(const Ed25519Identity& origin, const StreamIdentity& stream);
// Whether body.origin signed body's stream identity (the certificate a MANIFEST carries). Keys of small
// order, whose "signatures" anyone can make, verify nothing here.
bool certificate_verifies(const ManifestBody& body);

// The running hash of the segment table: chain(0) = SHA-256(certificate message), and
// chain(i + 1) = SHA-256(chain(i) || u32 i || u32 size_i || sha256_i).
Sha256Digest chain_start(const StreamIdentity& stream);
Sha256Digest chain_next(const Sha256Digest& chain, std::uint32_t index, const SegmentDescriptor& descriptor);

// "ncast segments v1" || u32 end || u8 final || chain(end): the table's first `end` descriptors, and
// with final that no other segment will follow them.
Signature seal_table(const Ed25519Identity& origin, std::uint32_t end, bool final, const Sha256Digest& chain);
bool seal_verifies(const PublicKey& origin, std::uint32_t end, bool final, const Sha256Digest& chain,
                   const Signature& seal);

}  // namespace ncast::proto
