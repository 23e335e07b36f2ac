#!/usr/bin/env bash
# Configures and builds ncast into ${NCAST_BUILD_DIR:-build}; extra arguments go to cmake's configure step.
# With NCAST_QUIET_BUILD=1 the compiler's progress goes to build.log in the build folder, shown only
# when the build fails (the demo sets it; tests and CI keep the full output).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${NCAST_BUILD_DIR:-$root/build}
"$root/tools/install-deps.sh"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
if [ "${NCAST_QUIET_BUILD:-0}" = 1 ]; then
  echo "building ncast in $build (log: $build/build.log)"
  cmake --build "$build" -j "$(nproc)" >"$build/build.log" 2>&1 || { cat "$build/build.log" >&2; exit 1; }
else
  cmake --build "$build" -j "$(nproc)"
fi
