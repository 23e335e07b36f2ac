#include "peer/swarm/loss_model.hpp"

#include <cmath>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace ncast::swarm {
namespace {

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::string part;
  std::istringstream in(text);
  while (std::getline(in, part, sep)) out.push_back(part);
  if (!text.empty() && text.back() == sep) out.emplace_back();
  return out;
}

double number(const std::string& text, const std::string& spec) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || !std::isfinite(v))
    throw std::invalid_argument("loss model '" + spec + "': '" + text + "' is not a number");
  return v;
}

void probability(double v, const char* what, const std::string& spec, bool allow_one) {
  if (!(v >= 0 && (allow_one ? v <= 1 : v < 1)))
    throw std::invalid_argument("loss model '" + spec + "': " + what + " must be in [0, " + (allow_one ? "1]" : "1)"));
}

}  // namespace

double LossSpec::mean_loss() const {
  switch (kind) {
    case Kind::none: return 0;
    case Kind::bernoulli: return p;
    case Kind::gilbert_elliott: {
      const double sum = good_to_bad + bad_to_good;
      const double pi_bad = sum > 0 ? good_to_bad / sum : 0;
      return pi_bad * loss_bad + (1 - pi_bad) * loss_good;
    }
  }
  return 0;
}

double LossSpec::mean_burst() const {
  switch (kind) {
    case Kind::none: return 0;
    case Kind::bernoulli: return p < 1 ? 1 / (1 - p) : 0;  // runs of losses, geometric
    case Kind::gilbert_elliott: return bad_to_good > 0 ? 1 / bad_to_good : 0;
  }
  return 0;
}

std::string LossSpec::describe() const {
  std::ostringstream o;
  switch (kind) {
    case Kind::none: o << "none"; break;
    case Kind::bernoulli: o << "bernoulli:" << p; break;
    case Kind::gilbert_elliott:
      o << "ge:" << good_to_bad << ':' << bad_to_good << ':' << loss_good << ':' << loss_bad;
      break;
  }
  return o.str();
}

LossSpec parse_loss(const std::string& text) {
  const auto parts = split(text, ':');
  LossSpec s;
  if (parts.empty() || parts[0] == "none") {
    if (parts.size() > 1) throw std::invalid_argument("loss model 'none' takes no parameters");
    return s;
  }
  const std::string& kind = parts[0];
  if (kind == "bernoulli") {
    if (parts.size() != 2) throw std::invalid_argument("loss model '" + text + "': want bernoulli:P");
    s.kind = LossSpec::Kind::bernoulli;
    s.p = number(parts[1], text);
    probability(s.p, "P", text, false);
    return s;
  }
  if (kind == "burst") {
    if (parts.size() != 3) throw std::invalid_argument("loss model '" + text + "': want burst:P:LEN");
    const double p = number(parts[1], text), len = number(parts[2], text);
    probability(p, "P", text, false);
    if (!(len >= 1)) throw std::invalid_argument("loss model '" + text + "': the mean burst length must be at least 1");
    s.kind = LossSpec::Kind::gilbert_elliott;
    s.bad_to_good = 1 / len;
    // Stationary P(bad) = g / (g + b) = p  →  g = p·b / (1 − p).
    s.good_to_bad = p * s.bad_to_good / (1 - p);
    if (s.good_to_bad > 1)
      throw std::invalid_argument("loss model '" + text + "': bursts this short cannot make this much loss");
    s.loss_good = 0;
    s.loss_bad = 1;
    return s;
  }
  if (kind == "ge") {
    if (parts.size() != 5)
      throw std::invalid_argument("loss model '" + text + "': want ge:P_GB:P_BG:LOSS_GOOD:LOSS_BAD");
    s.kind = LossSpec::Kind::gilbert_elliott;
    s.good_to_bad = number(parts[1], text);
    s.bad_to_good = number(parts[2], text);
    s.loss_good = number(parts[3], text);
    s.loss_bad = number(parts[4], text);
    probability(s.good_to_bad, "P_GB", text, true);
    probability(s.bad_to_good, "P_BG", text, true);
    probability(s.loss_good, "LOSS_GOOD", text, true);
    probability(s.loss_bad, "LOSS_BAD", text, true);
    if (s.bad_to_good == 0 && s.good_to_bad > 0)
      throw std::invalid_argument("loss model '" + text + "': a bad state never left loses everything (P_BG > 0)");
    if (!(s.mean_loss() < 1)) throw std::invalid_argument("loss model '" + text + "': everything would be lost");
    return s;
  }
  throw std::invalid_argument("unknown loss model '" + text +
                              "' (none, bernoulli:P, burst:P:LEN, ge:P_GB:P_BG:LOSS_GOOD:LOSS_BAD)");
}

LossProcess::LossProcess(const LossSpec& spec, std::uint64_t seed, Clock::duration slot)
    : spec_(spec), rng_(seed), slot_(slot) {
  // Start in the stationary distribution, so that short runs are not biased toward the good state.
  if (spec_.kind == LossSpec::Kind::gilbert_elliott) {
    const double sum = spec_.good_to_bad + spec_.bad_to_good;
    bad_ = sum > 0 && u_(rng_) < spec_.good_to_bad / sum;
  }
}

void LossProcess::advance(double steps) {
  // k steps of the chain: P(bad after k) = π + (x − π)·λ^k, with x = 1 if bad now (else 0), π the
  // stationary P(bad) and λ = 1 − g − b the chain's second eigenvalue.
  const double g = spec_.good_to_bad, b = spec_.bad_to_good, sum = g + b;
  if (sum <= 0) return;
  const double pi = g / sum, lambda = 1 - sum;
  const double p_bad = pi + ((bad_ ? 1.0 : 0.0) - pi) * std::pow(lambda, steps);
  bad_ = u_(rng_) < p_bad;
}

bool LossProcess::drop(Clock::time_point now) {
  if (spec_.kind == LossSpec::Kind::gilbert_elliott && slot_ > Clock::duration::zero() && seen_) {
    const double silent = std::chrono::duration<double>(now - last_) / std::chrono::duration<double>(slot_);
    // The step this datagram takes anyway covers one slot; longer silences add theirs first.
    if (silent >= 2) advance(std::floor(silent) - 1);
  }
  seen_ = true;
  last_ = now;
  return drop();
}

bool LossProcess::drop() {
  switch (spec_.kind) {
    case LossSpec::Kind::none: return false;
    case LossSpec::Kind::bernoulli: return u_(rng_) < spec_.p;
    case LossSpec::Kind::gilbert_elliott: {
      const bool lost = u_(rng_) < (bad_ ? spec_.loss_bad : spec_.loss_good);
      if (u_(rng_) < (bad_ ? spec_.bad_to_good : spec_.good_to_bad)) bad_ = !bad_;
      return lost;
    }
  }
  return false;
}

}  // namespace ncast::swarm
