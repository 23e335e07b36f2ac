#include "coding/rs/stripe.hpp"

namespace ncast::rs {

Stripe::Stripe(const Codec& codec, std::size_t shard_len) : len_(shard_len) {
  const std::size_t stride = (shard_len + kHostAlignment - 1) / kHostAlignment * kHostAlignment;
  memory_ = codec.allocate(stride * codec.total_shards());
  for (std::size_t i = 0; i < codec.total_shards(); ++i) ptrs_.push_back(memory_.data() + i * stride);
}

}  // namespace ncast::rs
