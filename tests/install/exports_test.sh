#!/usr/bin/env bash
# libncast_rs.so exports exactly the functions that ncast_rs.h declares: nothing outside the ncast_rs_
# prefix (internal code is no part of the ABI), and no declared function missing.
#   exports_test.sh LIBRARY.so HEADER
set -euo pipefail
library=$1
header=$2

exported=$(nm -D --defined-only "$library" | awk '{print $NF}' | sort)
# Every function the header names, whether or not its declaration carries NCAST_RS_API.
declared=$(grep -o '\bncast_rs_[a-z_0-9]*(' "$header" | tr -d '(' | sort -u)

status=0
foreign=$(grep -v '^ncast_rs_' <<<"$exported" || true)
if [ -n "$foreign" ]; then
  echo "exports_test: $library exports symbols outside the ncast_rs_ prefix:" >&2
  echo "$foreign" >&2
  status=1
fi
missing=$(comm -13 <(echo "$exported") <(echo "$declared"))
if [ -n "$missing" ]; then
  echo "exports_test: $header declares functions that $library does not export:" >&2
  echo "$missing" >&2
  status=1
fi
extra=$(comm -23 <(grep '^ncast_rs_' <<<"$exported" || true) <(echo "$declared"))
if [ -n "$extra" ]; then
  echo "exports_test: $library exports ncast_rs_ symbols that $header does not declare:" >&2
  echo "$extra" >&2
  status=1
fi
[ "$status" -eq 0 ] && echo "exports_test: $(wc -l <<<"$exported") symbols, all declared in $(basename "$header")"
exit "$status"
