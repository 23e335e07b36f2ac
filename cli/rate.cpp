#include "cli/rate.hpp"

#include <cmath>
#include <stdexcept>

namespace ncast::cli {

double parse_rate(const std::string& text) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    throw std::invalid_argument("bad rate '" + text + "' (e.g. 768k, 100M, 1G)");
  }
  const std::string suffix = text.substr(used);
  double mult = 1;
  if (suffix == "k" || suffix == "K") mult = 1e3;
  else if (suffix == "M") mult = 1e6;
  else if (suffix == "G") mult = 1e9;
  else if (!suffix.empty()) throw std::invalid_argument("bad rate '" + text + "' (e.g. 768k, 100M, 1G)");
  if (!(v >= 0) || !std::isfinite(v)) throw std::invalid_argument("bad rate '" + text + "'");
  return v * mult;
}

}  // namespace ncast::cli
