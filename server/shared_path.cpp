#include "server/shared_path.hpp"

#include <algorithm>

namespace ncast::server {
namespace {

// The window shows the path short when it carried less than this share of what its sessions need (the
// breaker's own threshold): their breakers, judging whole seconds on a moving average, still find it
// short for a second or two after it was relieved.
constexpr double kCarried = 0.9;
// The share of what a full path carried that its oldest sessions keep: a fifth is left to the elastic
// flows beside them (a TCP flow started beside sessions that filled the path, kept to all it carried,
// drove them into its queue's loss; kept to 0.8, 41-43 of the bed's 200 played on beside it, TCP 21-27 %).
constexpr double kKept = 0.8;

}  // namespace

std::vector<std::uint32_t> beyond_shared_path(std::vector<PathMember> members) {
  std::size_t judged = 0, short_now = 0;
  double carried = 0, needed_all = 0;
  for (const PathMember& m : members) {
    judged += m.judged ? 1 : 0;
    short_now += m.judged && m.short_now ? 1 : 0;
    carried += m.carried;
    needed_all += m.needed;
  }
  if (short_now < 2 || 2 * short_now < judged || carried >= kCarried * needed_all) return {};
  // Those whose players are furthest from a stall first, then the oldest, as long as what they need
  // together is within what they keep of what the path carried for all.
  std::stable_sort(members.begin(), members.end(), [](const PathMember& a, const PathMember& b) {
    if (a.ahead.has_value() != b.ahead.has_value()) return a.ahead.has_value();
    if (a.ahead && *a.ahead != *b.ahead) return *a.ahead > *b.ahead;
    return a.joined < b.joined;
  });
  std::vector<std::uint32_t> beyond;
  double needed = 0;
  for (std::size_t i = 0; i < members.size(); ++i) {
    needed += members[i].needed;
    if (i > 0 && needed > kKept * carried) beyond.push_back(members[i].slot);
  }
  return beyond;
}

}  // namespace ncast::server
