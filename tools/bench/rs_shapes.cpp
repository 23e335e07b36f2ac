#include "tools/bench/rs_shapes.hpp"

#include <stdexcept>

#include "cli/subcommands.hpp"
#include "coding/rs/codec.hpp"

namespace ncast::bench {

std::vector<Code> chosen_codes(std::size_t k, std::size_t m, const std::vector<Code>& defaults) {
  if ((k == 0) != (m == 0)) throw cli::UsageError("give both --k and --m, or neither for the default cases");
  if (k == 0) return defaults;
  try {
    rs::check_code_size(k, m);
  } catch (const std::invalid_argument& e) {
    throw cli::UsageError(e.what());
  }
  return {{k, m}};
}

std::vector<std::size_t> chosen_shards(bool sweep, std::size_t shard) {
  if (shard == 0) throw cli::UsageError("--shard must be positive");
  return sweep ? kSweepShards : std::vector<std::size_t>{shard};
}

}  // namespace ncast::bench
