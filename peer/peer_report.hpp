#pragma once
// ncast-peer's JSON lines on standard error: the "polluter" event as a source is caught, and the
// final "report" (docs/streaming.md lists its fields).
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "peer/server_links.hpp"
#include "peer/stream_receiver.hpp"

namespace ncast::peer {

// What the run itself saw, beside what the receiver and the links count.
struct RunSummary {
  std::string stream;
  TimePoint started{};
  std::optional<TimePoint> completed_at;
  std::string failure;  // empty when none
  std::uint64_t simulated_losses = 0;
  std::uint64_t unknown_source = 0;  // datagrams from addresses that are none of the servers
  nlohmann::json relay{nullptr};     // the relay's report; null without a relay
};

nlohmann::json polluter_event(std::uint32_t server_id, const StreamReceiver& receiver, const ServerLinks& links);
nlohmann::json peer_report(const RunSummary& run, const StreamReceiver& receiver, const ServerLinks& links);

}  // namespace ncast::peer
