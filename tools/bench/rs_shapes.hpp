#pragma once
// The RS shapes the rs and ceiling benchmarks run: storage systems' codes and wide ones, at the shard
// sizes of a sweep, or the one code the user named.
#include <cstddef>
#include <vector>

namespace ncast::bench {

struct Code {
  std::size_t k, m;
};

// Storage systems' shapes (HDFS's RS-6-3 and RS-10-4, Ceph's 4+2 and 8+3, MinIO's 12+4 and 16+4, an odd
// 17+3), then wide ones.
inline const std::vector<Code> kStorageCodes = {{4, 2}, {6, 3}, {8, 3}, {10, 4}, {12, 4}, {16, 4}, {17, 3}};
inline const std::vector<Code> kWideCodes = {{32, 8}, {128, 32}};
inline const std::vector<std::size_t> kSweepShards = {4 << 10, 64 << 10, 1 << 20};

// The codes of --k and --m (both or neither; 0 for not given): that one, checked as the codec checks it,
// or `defaults`. Throws cli::UsageError with a message for the user.
std::vector<Code> chosen_codes(std::size_t k, std::size_t m, const std::vector<Code>& defaults);

// --sweep's shard sizes, or the one of --shard (which must be positive).
std::vector<std::size_t> chosen_shards(bool sweep, std::size_t shard);

}  // namespace ncast::bench
