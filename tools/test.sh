#!/usr/bin/env bash
# The README's test command: installs what is missing, builds, and runs the whole suite with ctest.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${NCAST_BUILD_DIR:-$root/build}
"$root/tools/build.sh" "$@"
ctest --test-dir "$build" --output-on-failure -j "$(nproc)"
