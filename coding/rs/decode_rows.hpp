#pragma once
// The coefficients that rebuild lost shards from k surviving ones.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "coding/rs/matrix.hpp"

namespace ncast::rs {

// For a systematic code with m × k parity rows: row o of the result (o in outputs order) holds the k
// coefficients, one per source in sources order, with shard outputs[o] = Σ_j row[j] · shard sources[j].
// sources are k distinct shard indices. nullopt when those sources do not determine the data (only
// possible for matrices that are not MDS).
std::optional<std::vector<std::uint8_t>> decode_rows(const Matrix& parity, std::span<const std::size_t> sources,
                                                     std::span<const std::size_t> outputs);

}  // namespace ncast::rs
