#include "coding/rs/decode_plan.hpp"

#include <algorithm>
#include <numeric>

namespace ncast::rs {

void walk_like_encode(DecodePlan& plan) {
  const auto sources = plan.sources(), outputs = plan.outputs();
  if (sources.empty() || outputs.empty()) return;
  // Below: the outputs' mean index is under the sources' mean (compared as sums, without division).
  const std::size_t source_sum = std::accumulate(sources.begin(), sources.end(), std::size_t{0});
  const std::size_t output_sum = std::accumulate(outputs.begin(), outputs.end(), std::size_t{0});
  if (output_sum * sources.size() >= source_sum * outputs.size()) return;
  const auto first = plan.used.begin();
  std::reverse(first, first + static_cast<std::ptrdiff_t>(sources.size()));
  std::reverse(first + static_cast<std::ptrdiff_t>(sources.size()),
               first + static_cast<std::ptrdiff_t>(sources.size() + outputs.size()));
}

RecentPlan& RecentPlan::of_this_thread() {
  thread_local RecentPlan recent;
  return recent;
}

void RecentPlan::remember(const DecodeRequest& request, const DecodePlan& plan, DecodeRows rows) {
  stamp_ = request.stamp;
  want_ = request.want;
  erased_.assign(request.erased.begin(), request.erased.end());
  wanted_.assign(request.wanted.begin(), request.wanted.end());
  plan_ = plan;
  rows_ = std::move(rows);
}

}  // namespace ncast::rs
