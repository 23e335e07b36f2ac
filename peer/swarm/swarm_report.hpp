#pragma once
// The aggregate report of a swarm run ("event":"swarm", docs/swarm.md): the run's conditions, sums
// and distributions over the peers' reports, symbols per source symbol against what the loss model
// implies, and what serving the swarm cost the servers (their /metrics before and after).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "peer/swarm/swarm.hpp"

namespace ncast::swarm {

// A server's /metrics before and after the run (nullopt: could not be read).
struct ServerCost {
  std::optional<std::map<std::string, double>> before, after;
};

// What a run produced, besides its options and how it decoded.
struct RunRecord {
  std::vector<nlohmann::json> peers;  // every peer's report
  double wall_s = 0;
  double cpu_s = 0;               // this process: the peers, their decoding, the batcher
  std::vector<ServerCost> costs;  // one per options.metrics
  std::string partial;            // why the run was ended early; empty when it ran its course
};

// decoder: how the swarm decoded. The report takes the peers' reports over (it may hold them).
nlohmann::json swarm_report(const SwarmOptions& options, RunRecord&& run, nlohmann::json decoder);

}  // namespace ncast::swarm
