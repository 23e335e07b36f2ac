#include "protocol/drop_reason.hpp"

namespace ncast::proto {

std::string_view to_string(DropReason reason) {
  switch (reason) {
    case DropReason::truncated: return "truncated";
    case DropReason::oversized: return "oversized";
    case DropReason::bad_magic: return "bad_magic";
    case DropReason::bad_version: return "bad_version";
    case DropReason::bad_type: return "bad_type";
    case DropReason::malformed: return "malformed";
    case DropReason::bad_token: return "bad_token";
    case DropReason::unknown_session: return "unknown_session";
    case DropReason::wrong_address: return "wrong_address";
    case DropReason::auth: return "auth";
    case DropReason::replay: return "replay";
    case DropReason::rate_limited: return "rate_limited";
    case DropReason::unexpected: return "unexpected";
  }
  return "unknown";
}

}  // namespace ncast::proto
