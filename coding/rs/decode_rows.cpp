#include "coding/rs/decode_rows.hpp"

#include <algorithm>

namespace ncast::rs {

std::optional<std::vector<std::uint8_t>> decode_rows(const Matrix& parity, std::span<const std::size_t> sources,
                                                     std::span<const std::size_t> outputs) {
  const std::size_t k = parity.cols();
  // Generator row of shard i: the unit vector e_i for data, a parity row otherwise.
  auto generator_row = [&](std::size_t shard, std::uint8_t* out) {
    if (shard < k) {
      std::fill_n(out, k, std::uint8_t{0});
      out[shard] = 1;
    } else {
      std::copy_n(parity.row(shard - k), k, out);
    }
  };
  // The sources are G_S · data, so data = inv(G_S) · sources and any shard i is G_i · inv(G_S) · sources.
  Matrix g_sources(k, k);
  for (std::size_t j = 0; j < k; ++j) generator_row(sources[j], g_sources.row(j));
  const auto inverse = invert(g_sources);
  if (!inverse) return std::nullopt;

  Matrix g_outputs(outputs.size(), k);
  for (std::size_t o = 0; o < outputs.size(); ++o) generator_row(outputs[o], g_outputs.row(o));
  const Matrix rows = g_outputs * *inverse;
  return std::vector<std::uint8_t>(rows.bytes().begin(), rows.bytes().end());
}

}  // namespace ncast::rs
