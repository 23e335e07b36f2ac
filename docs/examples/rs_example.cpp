// The C++ API end to end: a stripe in memory, then a stream far larger than the buffers it goes through.
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "coding/rs/codec.hpp"
#include "coding/rs/stream.hpp"
#include "coding/rs/stripe.hpp"

int main() {
  using namespace ncast;

  // 8+3 with klauspost/Backblaze's default matrix, on the best backend available.
  rs::Codec codec(8, 3, {.matrix = rs::MatrixKind::vandermonde, .backend = Backend::automatic});
  std::printf("rs 8+3 on %s\n", codec.engine().description().c_str());

  rs::Stripe stripe(codec, 64 * 1024);  // 11 shards of 64 KiB in one suitable allocation
  std::mt19937_64 rng(1);
  for (std::size_t j = 0; j < codec.data_shards(); ++j)
    for (std::size_t b = 0; b < stripe.shard_len(); ++b) stripe.shard(j)[b] = static_cast<std::uint8_t>(rng());
  codec.encode(stripe.shards(), stripe.shard_len());

  std::vector<std::uint8_t> saved(stripe.shard(2), stripe.shard(2) + stripe.shard_len());
  const std::vector<std::size_t> lost{2, 5, 9};  // two data shards and a parity shard
  for (std::size_t i : lost) std::memset(stripe.shard(i), 0, stripe.shard_len());
  codec.reconstruct(stripe.shards(), stripe.shard_len(), lost);
  if (std::memcmp(saved.data(), stripe.shard(2), saved.size()) != 0) return 1;

  try {
    const std::vector<std::size_t> four{0, 1, 2, 3};
    codec.reconstruct(stripe.shards(), stripe.shard_len(), four);
    return 1;
  } catch (const rs::Unrecoverable& e) {
    std::printf("4 losses: %s\n", e.what());
  }

  // Streaming: 40 MiB per shard through 1 MiB slices. The callbacks would read and write files or
  // sockets; here data shard j is a pattern and we only count parity bytes.
  rs::StreamCoder stream(codec, 1 << 20);
  const std::uint64_t shard_size = 40ull << 20;
  std::uint64_t parity_bytes = 0;
  stream.encode(
      shard_size,
      [&](const rs::Slice& s) {
        for (std::size_t j = 0; j < codec.data_shards(); ++j)
          std::memset(s.shards[j], static_cast<int>(j + s.offset / s.len), s.len);
      },
      [&](const rs::Slice& s) { parity_bytes += s.len * codec.parity_shards(); });
  if (parity_bytes != shard_size * codec.parity_shards()) return 1;

  std::printf("encode, reconstruct, stream: ok\n");
  return 0;
}
