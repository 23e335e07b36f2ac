// A C++ user of the installed C API: encodes a 4+2 stripe, loses two shards, gets them back, and
// prints the library's version last, for the install test to compare with the package's.
#include <ncast/ncast_rs.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <vector>

int main() {
  ncast_rs* raw = nullptr;
  if (ncast_rs_create(&raw, 4, 2, nullptr) != NCAST_RS_OK) {
    std::fprintf(stderr, "create: %s\n", ncast_rs_last_error());
    return 1;
  }
  const std::unique_ptr<ncast_rs, decltype(&ncast_rs_destroy)> rs(raw, &ncast_rs_destroy);

  const std::size_t len = 1000;
  std::vector<std::vector<std::uint8_t>> shards(6, std::vector<std::uint8_t>(len));
  for (std::size_t i = 0; i < 4; ++i)
    for (std::size_t b = 0; b < len; ++b) shards[i][b] = static_cast<std::uint8_t>(i * 31 + b);
  std::vector<std::uint8_t*> pointers;
  for (auto& shard : shards) pointers.push_back(shard.data());
  if (ncast_rs_encode(rs.get(), pointers.data(), len) != NCAST_RS_OK) return 1;

  const auto original = shards;
  const unsigned lost[] = {1, 5};
  for (unsigned i : lost) shards[i].assign(len, 0);
  if (ncast_rs_reconstruct(rs.get(), pointers.data(), len, lost, 2, nullptr, 0) != NCAST_RS_OK) {
    std::fprintf(stderr, "reconstruct: %s\n", ncast_rs_last_error());
    return 1;
  }
  if (shards != original) {
    std::fprintf(stderr, "reconstruct gave back different bytes\n");
    return 1;
  }
  std::printf("%s\n", ncast_rs_version());
  return 0;
}
