#pragma once
#include <string>

namespace ncast::cli {

// "768k", "100M", "1.5G", "64000" (bit/s, decimal multipliers) → bit/s. Throws std::invalid_argument.
double parse_rate(const std::string& text);

}  // namespace ncast::cli
