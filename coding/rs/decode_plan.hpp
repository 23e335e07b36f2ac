#pragma once
// What a reconstruction reads and rebuilds, and the last one each thread ran: a lost disk or node
// repeats one erasure list call after call, and recognising it by comparing a few words skips the
// planning, the decode cache's lock and its reference counting, which on 4 KiB shards of a narrow
// code cost a fifth of the multiply.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "coding/rs/decode_cache.hpp"
#include "coding/rs/shard_set.hpp"

namespace ncast::rs {

// Which erased shards a reconstruction rebuilds: all, the data shards only, or those listed.
enum class DecodeWant { all, data, listed };

// The k sources read and the shards rebuilt, each in the order walk_like_encode gives them, in one array: a
// call checks all of them for null and finds the runs of stripes over all of them.
struct DecodePlan {
  DecodeKey key;
  std::array<std::size_t, kMaxShards> used;  // source_count sources, then output_count outputs
  std::size_t source_count = 0, output_count = 0;

  std::span<const std::size_t> sources() const { return {used.data(), source_count}; }
  std::span<const std::size_t> outputs() const { return {used.data() + source_count, output_count}; }
  std::span<const std::size_t> all() const { return {used.data(), source_count + output_count}; }
};

// Orders a plan's sources and outputs (each in increasing shard order before) so that the kernel walks
// them as an encode walks its shards: the encode reads data shards 0..k-1 upwards, towards the parity it
// writes above them. Where the outputs lie below the sources (lost data shards rebuilt with parity, the
// usual case) both are reversed, the mirror image of that walk; otherwise (lost parity) the order stays
// the encode's. With shards laid out in index order (rs::Stripe) a decode then goes through memory as the
// encode does, and costs what it costs: the direction alone moved a decode of m lost data shards at 1 MiB
// on Zen 4 from 0.7-0.9x the encode's rate (16+4, 17+3) or 1.2-1.45x (32+8) to 1.0-1.1x.
void walk_like_encode(DecodePlan& plan);

// A reconstruction call as its caller worded it (order and duplicates included), and the stamp of the
// codec's decode cache (DecodeCache::stamp) that resolved it.
struct DecodeRequest {
  std::uint64_t stamp;
  DecodeWant want;
  std::span<const std::size_t> erased, wanted;
};

// One thread's latest request with its plan and rows. The rows are shared with the decode cache, so an
// entry evicted there stays valid here; a cleared cache changes its stamp, so no request matches.
class RecentPlan {
 public:
  static RecentPlan& of_this_thread();

  // Inline: it runs on every reconstruction call, where a call into another file was measurable.
  bool matches(const DecodeRequest& request) const {
    return request.stamp == stamp_ && request.want == want_ && same(request.erased, erased_) &&
           (request.want != DecodeWant::listed || same(request.wanted, wanted_));
  }
  void remember(const DecodeRequest& request, const DecodePlan& plan, DecodeRows rows);
  const DecodePlan& plan() const { return plan_; }
  const std::uint8_t* rows() const { return rows_->data(); }

 private:
  // A handful of indices: a loop beats a call to memcmp.
  static bool same(std::span<const std::size_t> a, const std::vector<std::size_t>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
      if (a[i] != b[i]) return false;
    return true;
  }

  std::uint64_t stamp_ = 0;  // 0: nothing remembered (stamps start at 1)
  DecodeWant want_ = DecodeWant::all;
  std::vector<std::size_t> erased_, wanted_;
  DecodePlan plan_;
  DecodeRows rows_;
};

}  // namespace ncast::rs
