#!/usr/bin/env bash
# tools/install/ncast-completion.bash as bash runs it for a user pressing TAB: an option of a plain
# program, a command of a subcommand program, that command's own options, and nothing foreign.
#   completion_test.sh SCRIPT SERVER RS
set -euo pipefail
source "$1"
server=$2
rs=$3
fail() {
  echo "completion_test: $*" >&2
  exit 1
}
complete_words() { # the words a TAB after WORDS... offers
  COMP_WORDS=("$@")
  COMP_CWORD=$(($# - 1))
  COMPREPLY=()
  _ncast_complete
  printf '%s\n' "${COMPREPLY[@]}"
}
export ASAN_OPTIONS=detect_leaks=0
[ "$(complete_words "$server" --lis)" = "--listen" ] || fail "ncast-server --lis: $(complete_words "$server" --lis)"
grep -qx -- --pacing-burst <<<"$(complete_words "$server" --pacing)" || fail "ncast-server --pacing offers no --pacing-burst"
[ "$(complete_words "$rs" enc)" = "encode" ] || fail "ncast-rs enc: $(complete_words "$rs" enc)"
grep -qx -- --parity-shards <<<"$(complete_words "$rs" encode --par)" || fail "ncast-rs encode --par: no --parity-shards"
! grep -qx -- --output-dir <<<"$(complete_words "$rs" decode --o)" || fail "ncast-rs decode offers encode's --output-dir"
echo "completion_test: options and commands complete from each program's --help"
