#include "server/shared_path.hpp"

#include <algorithm>

namespace ncast::server {

std::vector<std::uint32_t> beyond_shared_path(std::vector<PathMember> members) {
  std::size_t judged = 0, short_now = 0;
  double carried = 0;
  for (const PathMember& m : members) {
    judged += m.judged ? 1 : 0;
    short_now += m.judged && m.short_now ? 1 : 0;
    carried += m.carried;
  }
  if (short_now < 2 || 2 * short_now < judged) return {};
  std::stable_sort(members.begin(), members.end(),
                   [](const PathMember& a, const PathMember& b) { return a.joined < b.joined; });
  // The oldest first, as long as what they need together is within what the path carried for all.
  std::vector<std::uint32_t> beyond;
  double needed = 0;
  for (std::size_t i = 0; i < members.size(); ++i) {
    needed += members[i].needed;
    if (i > 0 && needed > carried) beyond.push_back(members[i].slot);
  }
  return beyond;
}

}  // namespace ncast::server
