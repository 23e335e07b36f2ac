#!/usr/bin/env bash
# Runs ncast-bench subcommands on one core and writes their markdown tables, with the date, machine and
# commit they were measured on, to bench/results/<date>-<name>.md.
#   tools/bench-results.sh NAME 'gf' 'rs --k 10 --m 4' …   (each quoted argument is one ncast-bench run)
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 NAME 'SUBCOMMAND [ARGS]' ['SUBCOMMAND [ARGS]' …]" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
build=${NCAST_BUILD_DIR:-$root/build}
bench="$build/tools/bench/ncast-bench"
[ -x "$bench" ] || { echo "$0: $bench not built (run tools/build.sh first)" >&2; exit 1; }
name=$1
shift
out="$root/bench/results/$(date -u +%Y-%m-%d)-$name.md"
commit=$(git -C "$root" rev-parse --short HEAD)
dirty=$(git -C "$root" status --porcelain --untracked-files=no | grep -q . && echo " (with uncommitted changes)" || true)
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
{
  echo "# ncast-bench: $name"
  echo
  echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "- commit: $commit$dirty"
  echo "- CPU: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores; flags: $(grep -o -w -E 'avx2|avx512f|avx512bw|gfni' /proc/cpuinfo | sort -u | tr '\n' ' ')"
  echo "- compiler: $(c++ --version | head -1); ISA-L: $(dpkg-query -W -f='${Version}' libisal-dev 2>/dev/null || echo unknown)"
  echo "- one core (--cpu 0); GB/s = 10^9 bytes/s; anchor timed in alternating trials in the same process"
  for run in "$@"; do
    echo
    echo "## ncast-bench $run --cpu 0 --markdown"
    echo
    # shellcheck disable=SC2086  # each run is a command line to split
    "$bench" $run --cpu 0 --markdown
  done
} >"$tmp"
mv "$tmp" "$out"
trap - EXIT
echo "wrote $out"
