#!/usr/bin/env bash
# The README's test command: installs what is missing, builds, and runs the whole suite with ctest.
# A sanitized build (-DNCAST_SANITIZE=ON) fails on any AddressSanitizer, LeakSanitizer or UBSan report,
# the reports of processes the tests start included: they are written to files and checked at the end.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${NCAST_BUILD_DIR:-$root/build}

sanitized=false
case " $* " in *" -DNCAST_SANITIZE=ON "* | *" -DNCAST_SANITIZE:BOOL=ON "*) sanitized=true ;; esac
grep -qx 'NCAST_SANITIZE:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null && sanitized=true

if $sanitized; then
  # LeakSanitizer cannot run where ptrace-like access is denied (some containers); say so, don't fail.
  leaks=1
  probe=$(mktemp -d)
  if echo 'int main() { return 0; }' | c++ -fsanitize=address -x c++ - -o "$probe/lsan" 2>/dev/null &&
    ! ASAN_OPTIONS=detect_leaks=1 "$probe/lsan" >/dev/null 2>&1; then
    leaks=0
    echo "test.sh: LeakSanitizer does not work on this machine; leak detection is off" >&2
  fi
  rm -rf "$probe"
  # The caller's own options come last, so they win.
  export ASAN_OPTIONS="halt_on_error=1:detect_leaks=$leaks:detect_stack_use_after_return=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
  export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
fi

"$root/tools/build.sh" "$@"

# A failed test runs once more before the suite fails: the end-to-end tests drive real processes over
# loopback on a shared 2-core machine, where about one run in twenty has been seen to miss a deadline.
# A real failure fails both times; ctest's output still shows the first.
retry=(--repeat until-pass:2)
if ! $sanitized; then
  exec ctest --test-dir "$build" --output-on-failure -j "$(nproc)" "${retry[@]}"
fi
reports=$build/sanitizer-reports
rm -rf "$reports"
mkdir -p "$reports"
export ASAN_OPTIONS="$ASAN_OPTIONS:log_path=$reports/asan"
export UBSAN_OPTIONS="$UBSAN_OPTIONS:log_path=$reports/ubsan"
status=0
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" "${retry[@]}" || status=$?
if [ -n "$(ls -A "$reports")" ]; then
  for f in "$reports"/*; do
    printf '\n== %s\n' "$f"
    cat "$f"
  done
  echo "test.sh: sanitizer reports above" >&2
  exit 1
fi
exit $status
