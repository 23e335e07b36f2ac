#include "coding/rs/decode_plan.hpp"

namespace ncast::rs {

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
