#!/usr/bin/env bash
# The README's main job: installs what is missing, builds, and shows what ncast does on this machine.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${NCAST_BUILD_DIR:-$root/build}
"$root/tools/build.sh"
bench="$build/tools/bench/ncast-bench"

echo
echo "== GF(2^8) engine: every SIMD level this CPU has, checked against ISA-L, then timed beside it (one core)"
"$bench" gf --cpu 0 --seconds 0.4
