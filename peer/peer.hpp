#pragma once
// An ncast peer: joins one or more servers of a stream on one UDP socket, decodes, verifies and writes
// the stream in order, optionally relays recoded symbols to other peers, and reports what happened.
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "net/address.hpp"
#include "peer/segment_decoder.hpp"
#include "protocol/crypto.hpp"

namespace ncast::peer {

struct PeerOptions {
  std::vector<net::Address> servers;
  std::optional<proto::PublicKey> server_key;  // pinned identity (all servers share it, or one server)
  std::optional<proto::PublicKey> origin_key;  // pinned origin: whose seals the segment table must carry
  std::string stream;
  std::string output;  // a path, "-" for standard output, "" to discard
  bool force = false;  // overwrite an existing output file
  bool live_edge = false;
  std::uint32_t start_segment = 0;
  std::uint16_t window = 8;
  bool download = true;
  double max_rate = 0;  // bit/s, 0 = no cap of ours
  std::uint16_t max_datagram = 1232;
  double loss = 0;  // simulated: fraction of arriving datagrams dropped
  std::uint64_t seed = 0;
  std::optional<net::Address> relay;  // serve recoded symbols here
  std::optional<std::uint32_t> relay_id;
  double relay_linger_s = 30;  // after completing, keep relaying while downstream sessions remain, at most this
  std::uint64_t relay_memory = std::uint64_t{64} << 20;  // decoded segments kept to recode from (oldest evicted)
  DecoderChoice decoder = DecoderChoice::cpu;            // for make_decoder_factory() (decoder_factory.hpp)
  std::string report_path;
  bool progress = false;
  double timeout_s = 0;  // give up after this long (0: never)
  std::chrono::milliseconds stall_timeout{2000};
  std::chrono::milliseconds stall_threshold{500};
};

struct PeerResult {
  int exit_code = 0;  // 0 complete, 1 not complete, 130 interrupted (cli::kExitInterrupted)
  // Initialised from nullptr, json's noexcept constructor, so that PeerResult's defaulted members do
  // not throw.
  nlohmann::json report{nullptr};
};

// Runs until complete, failed, timed out or interrupted (SIGINT/SIGTERM), decoding with decoders (the
// CPU decoder when null); the output file gets its name only when the stream is complete. Throws
// std::runtime_error for set-up failures (output file exists, cannot bind).
PeerResult run_peer(const PeerOptions& options, std::shared_ptr<DecoderFactory> decoders = nullptr);

}  // namespace ncast::peer
