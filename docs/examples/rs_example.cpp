// The C++ API end to end: an 8+3 stripe rebuilt after three losses, four losses refused, a batch of
// stripes encoded in one call and verified. Build: c++ -std=c++17 rs_example.cpp $(pkg-config --cflags
// --libs ncast-rs) (the tests build and run it, in the tree and against an installed ncast).
#include <ncast/ncast_rs.hpp>

#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

int main() try {
  constexpr unsigned k = 8, m = 3;
  constexpr std::size_t len = 64 * 1024;
  ncast::RsOptions options;
  options.matrix = ncast::RsMatrix::vandermonde;  // klauspost/Backblaze's default; Cauchy is ISA-L's
  const ncast::RsCodec codec(k, m, options);
  std::printf("ncast-rs %s, %u+%u on %s\n", ncast::rs_version().c_str(), k, m, codec.backend_description().c_str());

  // One allocation for the stripe, shard i at i * len (pinned memory when the backend is CUDA). It is
  // declared after the codec, so it goes first: the codec must outlive its buffers.
  const ncast::RsBuffer memory = codec.alloc((k + m) * len);
  std::vector<std::uint8_t*> shards;
  for (unsigned i = 0; i < k + m; ++i) shards.push_back(memory.data() + i * len);
  std::mt19937 rng(1);
  for (std::size_t b = 0; b < k * len; ++b) memory.data()[b] = static_cast<std::uint8_t>(rng());
  codec.encode(shards, len);
  const std::vector<std::uint8_t> original(memory.data(), memory.data() + memory.size());

  // Two data shards and a parity shard lost, rebuilt where their pointers point.
  const std::vector<unsigned> lost{2, 5, 9};
  for (unsigned i : lost) std::memset(shards[i], 0xEE, len);
  codec.reconstruct(shards, len, lost);
  if (std::memcmp(memory.data(), original.data(), original.size()) != 0) {
    std::fprintf(stderr, "reconstruct gave back different bytes\n");
    return 1;
  }

  // Four losses are one too many: an exception of its own type, nothing touched.
  try {
    codec.reconstruct(shards, len, {0, 1, 2, 3});
    return 1;
  } catch (const ncast::RsUnrecoverable& e) {
    std::printf("4 losses: %s\n", e.what());
  }

  // Many stripes in one call: their k + m pointers one stripe after the other.
  constexpr std::size_t stripes = 16;
  const ncast::RsBuffer batch = codec.alloc(stripes * (k + m) * len);
  std::vector<std::uint8_t*> batch_shards;
  for (std::size_t i = 0; i < stripes * (k + m); ++i) batch_shards.push_back(batch.data() + i * len);
  for (std::size_t b = 0; b < batch.size(); ++b) batch.data()[b] = static_cast<std::uint8_t>(rng());
  codec.encode_batch(batch_shards, len);

  // verify() recomputes parity: every stripe checks out until one byte of one shard flips.
  for (std::size_t s = 0; s < stripes; ++s) {
    if (!codec.verify({&batch_shards[s * (k + m)], k + m}, len)) return 1;
  }
  batch_shards[3 * (k + m) + 1][100] ^= 1;
  if (codec.verify({&batch_shards[3 * (k + m)], k + m}, len)) return 1;

  std::printf("encode, reconstruct, batch encode, verify: ok\n");
  return 0;
} catch (const ncast::RsError& e) {  // any other failure: the C status and the library's reason
  std::fprintf(stderr, "%s (status %d)\n", e.what(), static_cast<int>(e.status()));
  return 1;
}
