#include "peer/peer_report.hpp"

namespace ncast::peer {
namespace {

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

nlohmann::json since(const std::optional<TimePoint>& at, TimePoint started) {
  return at ? nlohmann::json(seconds(*at - started)) : nlohmann::json(nullptr);
}

nlohmann::json drops_json(const proto::DropCounters& d) {
  nlohmann::json j = nlohmann::json::object();
  for (std::size_t i = 0; i < proto::kDropReasonCount; ++i) {
    const auto r = static_cast<proto::DropReason>(i);
    if (d[r]) j[std::string(proto::to_string(r))] = d[r];
  }
  return j;
}

void add_symbol_counts(nlohmann::json& j, const ReceiverStats& s) {
  j["symbols_received"] = s.symbols;
  j["symbols_needed"] = s.symbols_needed;
  j["overhead"] = s.symbols_needed ? static_cast<double>(s.symbols) / static_cast<double>(s.symbols_needed) : 0.0;
  j["innovative"] = s.innovative;
  j["non_innovative"] = s.non_innovative;
  j["after_decode"] = s.after_decode;
  j["out_of_window"] = s.out_of_window;
  j["hash_failures"] = s.hash_failures;
  j["recovered"] = s.recovered;
  j["held_back"] = s.held_back;
  j["from_polluters"] = s.from_polluters;
}

nlohmann::json polluters_json(const StreamReceiver& receiver, const ServerLinks& links) {
  nlohmann::json polluters = nlohmann::json::array();
  for (const auto& [id, p] : receiver.polluters()) {
    nlohmann::json pj{
        {"server_id", id}, {"segment", p.segment}, {"segments", p.segments}, {"bad_symbols", p.bad_symbols}};
    if (const auto address = links.address_of(id)) pj["address"] = *address;
    polluters.push_back(pj);
  }
  return polluters;
}

nlohmann::json link_json(const ServerLink& l) {
  const auto& c = l.counters();
  nlohmann::json sj{{"address", l.options().server.to_string()},
                    {"packets", c.packets},
                    {"coded", c.coded},
                    {"acks", c.acks_sent},
                    {"handshakes", c.handshakes},
                    {"rejoins", c.rejoins},
                    {"resumes", c.resumes},
                    {"reshares", c.reshares},
                    {"drops", drops_json(c.drops)}};
  if (l.server_id()) sj["server_id"] = *l.server_id();
  if (l.identity()) sj["identity"] = proto::to_hex(*l.identity());
  if (l.origin()) sj["origin"] = proto::to_hex(*l.origin());
  if (l.forged()) sj["forged"] = true;
  if (l.state() == ServerLink::State::failed) sj["failure"] = l.failure();
  return sj;
}

// Every link's counters, and their bad packets, rejoins and resumes summed.
void add_links(nlohmann::json& j, const ServerLinks& links, std::uint64_t bad) {
  std::uint64_t rejoins = 0, resumes = 0, forgers = 0;
  nlohmann::json servers = nlohmann::json::array();
  for (std::size_t i = 0; i < links.size(); ++i) {
    const auto& c = links[i].counters();
    forgers += links[i].forged() ? 1 : 0;
    // Early arrivals for a session whose MANIFEST was lost are dropped too, but are not bad.
    bad += c.drops.total() - c.drops[proto::DropReason::unexpected];
    rejoins += c.rejoins;
    resumes += c.resumes;
    servers.push_back(link_json(links[i]));
  }
  j["bad_packets"] = bad;
  j["rejoins"] = rejoins;
  j["resumes"] = resumes;
  j["failovers"] = links.failovers();
  j["forgers"] = forgers;
  j["servers"] = servers;
}

// Whose seals the segment table was taken under: the pinned key, or those learned from origin sessions.
nlohmann::json origin_json(const OriginTrust& trust) {
  if (trust.pinned()) return {{"pinned", true}, {"keys", {proto::to_hex(*trust.pinned())}}};
  nlohmann::json keys = nlohmann::json::array();
  for (const auto& k : trust.learned()) keys.push_back(proto::to_hex(k));
  return {{"pinned", false}, {"keys", keys}};
}

}  // namespace

nlohmann::json polluter_event(std::uint32_t server_id, const StreamReceiver& receiver, const ServerLinks& links) {
  nlohmann::json j{
      {"event", "polluter"}, {"server_id", server_id}, {"segment", receiver.polluters().at(server_id).segment}};
  if (const auto address = links.address_of(server_id)) j["address"] = *address;
  return j;
}

nlohmann::json peer_report(const RunSummary& run, const StreamReceiver& receiver, const ServerLinks& links) {
  const auto& s = receiver.stats();
  nlohmann::json j;
  j["event"] = "report";
  j["stream"] = run.stream;
  j["decoder"] = receiver.decoders().description();
  j["complete"] = run.completed_at.has_value() && run.failure.empty();
  if (!run.failure.empty()) j["failure"] = run.failure;
  j["segments"] = s.segments_written;
  j["bytes"] = s.bytes_written;
  j["time_to_first_segment_s"] = since(receiver.first_segment_at(), run.started);
  j["completion_s"] = since(run.completed_at, run.started);
  add_symbol_counts(j, s);
  j["polluters"] = polluters_json(receiver, links);
  j["origin"] = origin_json(receiver.origins());
  j["stalls"] = s.stalls;
  j["skipped"] = s.skipped;
  j["stall_s"] = s.stall_seconds;
  j["below_bitrate_s"] = s.below_bitrate_seconds;
  j["simulated_losses"] = run.simulated_losses;
  add_links(j, links, s.rejected + run.unknown_source);
  if (!run.relay.is_null()) j["relay"] = run.relay;
  return j;
}

}  // namespace ncast::peer
