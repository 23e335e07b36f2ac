#include "coding/rs/decode_plan.hpp"

#include <algorithm>

namespace ncast::rs {

RecentPlan& RecentPlan::of_this_thread() {
  thread_local RecentPlan recent;
  return recent;
}

namespace {

// A handful of indices: a loop beats a call to memcmp.
bool same(std::span<const std::size_t> a, const std::vector<std::size_t>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i]) return false;
  return true;
}

}  // namespace

bool RecentPlan::matches(const DecodeRequest& request) const {
  return request.stamp == stamp_ && request.want == want_ && same(request.erased, erased_) &&
         (request.want != DecodeWant::listed || same(request.wanted, wanted_));
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
