#pragma once
// A swarm of simulated peers (SimPeer) in one process: worker threads each run many peers on one
// io_context; the calling thread starts them on a ramp, drives churn (peers leaving mid-stream, each
// replaced by a newcomer), reports progress, and at the end gathers every peer's report into one
// aggregate: completion, time to first segment, late segments at the playback rate, symbols per
// source symbol against what the loss model implies, and what it cost the servers (their /metrics).
// The peers decode each on the CPU, or together: batched on the GPU (peer/decode_batcher.hpp).
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "net/address.hpp"
#include "peer/decode_batcher.hpp"
#include "peer/segment_decoder.hpp"
#include "peer/swarm/loss_model.hpp"

namespace ncast::swarm {

struct SwarmProgress {
  double elapsed_s = 0;
  std::size_t started = 0, running = 0, complete = 0, failed = 0, left = 0;
  std::uint64_t symbols = 0, arrived = 0, lost = 0, bytes = 0, needed = 0;
};

struct SwarmOptions {
  std::vector<net::Address> servers;
  bool spread = false;                // peer i pulls from server i mod k alone (else every peer from all)
  std::vector<net::Address> metrics;  // the servers' /metrics endpoints, for the cost of serving
  std::string stream;
  std::size_t peers = 10;
  unsigned threads = 1;
  // Peers of a worker thread that share one socket toward an IPv4 loopback server, each under a
  // loopback address of its own (peer/swarm/socket_group.hpp); 1, or a server elsewhere: a socket each.
  std::size_t peers_per_socket = 64;
  // The peers of a worker thread hash and open each CODED shared part once (peer/shared_parts.hpp).
  bool share_parts = true;
  double realtime_fraction = 1.0;  // the rest download as fast as allowed
  // in (0, 1]: the peers that decode and verify every segment (verifies() picks them); the others
  // count ranks only (SimPeerOptions::verify).
  double verify_fraction = 1.0;
  LossSpec loss;
  bool loss_shared = false;                    // one loss process for the whole swarm rather than one per peer
  std::chrono::microseconds loss_slot{10000};  // a silence of k slots moves a bursty chain k steps (0: never)
  std::chrono::microseconds delay{0}, jitter{0};
  double ramp_s = 1.0;           // the initial peers join evenly over this long
  double churn_rate = 0;         // peers per second that leave, each replaced by a newcomer
  double churn_duration_s = 10;  // churn happens during this long from the start
  bool churn_polite = true;      // leaving peers say BYE (else they vanish)
  double timeout_s = 120;        // peers still running then have failed
  std::uint16_t window = 4;
  std::uint16_t max_datagram = 1232;
  double startup_s = 1.0;  // the model player's buffer
  std::uint64_t seed = 1;
  // cpu: each peer decodes alone on the CPU; gpu: the peers' full generations are decoded together,
  // batched on the GPU (std::runtime_error before any peer starts when there is none); automatic:
  // gpu when a device is usable and the swarm has at least kAutoGpuPeers verifying peers, else cpu.
  peer::DecoderChoice decoder = peer::DecoderChoice::automatic;
  peer::BatchOptions batch;
  // Given, the peers decode through this batcher whatever `decoder` says (another backend: the host's
  // in the tests).
  std::shared_ptr<peer::DecodeBatcher> batcher;
  bool per_peer = true;  // include every peer's report
  double progress_interval_s = 1.0;
  std::function<void(const SwarmProgress&)> on_progress;
  // Polled as the run goes (ncast-swarm: SIGINT or SIGTERM): a reason ends the run early, the peers
  // still running fail with it, and the report is marked partial.
  std::function<std::string()> stop_reason;
};

// Runs the swarm to its end, or until stop_reason gives one. The result is the aggregate report
// ("event":"swarm"); "ok" is true when the run was not ended early and every peer that did not leave
// completed with every segment verified. Throws std::invalid_argument
// for unusable options.
nlohmann::json run_swarm(const SwarmOptions& options);

// Whether peer `id` decodes and verifies, for a verify fraction f in (0, 1]: when frac(id·φ) < f, φ
// the golden ratio's conjugate. Deterministic, spread evenly over any run of ids (a Weyl sequence),
// whatever the realtime fraction's pattern, and peer 0 always verifies.
bool verifies(std::uint32_t id, double fraction);

// The file descriptors that `peers` peers at once need: their sockets, and a margin for the rest of
// the process.
std::size_t descriptors_needed(const SwarmOptions& options, std::size_t peers);

// Below this many peers the CPU decodes a swarm with a small part of a core (a 768 kbit/s peer
// costs about 0.1 % of one), and batches would be too thin to be worth the GPU's thread and copies.
inline constexpr std::size_t kAutoGpuPeers = 256;

}  // namespace ncast::swarm
