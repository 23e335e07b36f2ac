#include "peer/peer_relay.hpp"

#include <cstdio>

#include "protocol/crypto.hpp"

namespace ncast::peer {

void PeerRelay::after_input() {
  if (receiver_.adopted() && options_.listen && !relay_) {
    relay_ = std::make_unique<Relay>(io_, receiver_, *options_.listen, options_.relay_id.value_or(proto::random_u32()),
                                     options_.max_rate_bps);
    std::fprintf(stderr, "%s\n", relay_->announcement().dump().c_str());
    std::fflush(stderr);
  }
  if (relay_) relay_->wake();
}

bool PeerRelay::finished(TimePoint completed_at, TimePoint now) {
  if (!relay_) return true;
  // Keep relaying while downstream peers are still being served.
  return relay_->idle(completed_at, now) ||
         std::chrono::duration<double>(now - completed_at).count() > options_.linger_s;
}

void PeerRelay::shutdown(const std::function<void()>& done) {
  if (relay_) relay_->shutdown(done);
  else done();
}

nlohmann::json PeerRelay::report() const { return relay_ ? relay_->report() : nlohmann::json(nullptr); }

}  // namespace ncast::peer
