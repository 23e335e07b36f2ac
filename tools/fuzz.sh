#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz with clang (AddressSanitizer + UBSan) into build-fuzz and
# runs them one after another, each from its committed seed corpus, for a bounded number of executions
# or seconds, whichever comes first.
#   tools/fuzz.sh [--runs N] [--seconds S] [TARGET...]   default: every target, 60 s each
#   tools/fuzz.sh --merge TARGET...                       fold new coverage back into the seed corpus
#   tools/fuzz.sh --build-only                            build the targets, run nothing
# New inputs that add coverage go to build-fuzz/corpus/TARGET (the committed seeds are only read).
# A failing input is written to build-fuzz/findings/TARGET/ and the script exits 1 after the others
# have run; replay one with build-fuzz/tests/fuzz/fuzz_TARGET FILE. Logs: build-fuzz/logs/TARGET.log.
# NCAST_FUZZ_BUILD_DIR overrides build-fuzz.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${NCAST_FUZZ_BUILD_DIR:-$root/build-fuzz}
# shellcheck source=tools/fuzz-targets.sh
. "$root/tools/fuzz-targets.sh"

runs=-1 seconds=60 merge=false build_only=false targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --merge) merge=true; shift ;;
    --build-only) build_only=true; shift ;;
    -h | --help) sed -n '2,12p' "$0"; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || targets=("${all_targets[@]}")
for t in "${targets[@]}"; do
  [[ " ${all_targets[*]} " == *" $t "* ]] || { echo "fuzz.sh: no target $t (${all_targets[*]})" >&2; exit 2; }
done

"$root/tools/install-deps.sh"
missing=()
for p in clang libclang-rt-dev; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

CC=clang CXX=clang++ cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNCAST_FUZZ=ON \
  -DNCAST_ENABLE_CUDA=OFF >/dev/null
cmake --build "$build" -j "$(nproc)" --target fuzz_targets
$build_only && exit 0

export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"

failed=()
for t in "${targets[@]}"; do
  exe="$build/tests/fuzz/fuzz_$t"
  seeds="$root/tests/fuzz/corpus/$t"
  work="$build/corpus/$t"
  findings="$build/findings/$t"
  mkdir -p "$work" "$findings" "$build/logs"
  dict=()
  [ -f "$root/tests/fuzz/$t.dict" ] && dict=("-dict=$root/tests/fuzz/$t.dict")
  if $merge; then
    # Inputs of the work corpus that add coverage beyond the seeds join the seeds.
    "$exe" -merge=1 -max_len="$(max_len "$t")" "${dict[@]}" "$seeds" "$work" >"$build/logs/$t.merge.log" 2>&1
    echo "fuzz.sh: $t: $(ls "$seeds" | wc -l) seed inputs after merging"
    continue
  fi
  log="$build/logs/$t.log"
  echo "fuzz.sh: $t: runs $runs (-1 = no limit), seconds $seconds (0 = no limit), log $log"
  status=0
  "$exe" -runs="$runs" -max_total_time="$seconds" -max_len="$(max_len "$t")" -timeout=30 -print_final_stats=1 \
    -artifact_prefix="$findings/" "${dict[@]}" "$work" "$seeds" >"$log" 2>&1 || status=$?
  executed=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')
  took=$(grep -o 'Done [0-9]* runs in [0-9]* second' "$log" | grep -o 'in [0-9]*' | cut -c4- || true)
  if [ $status -eq 0 ]; then
    echo "fuzz.sh: $t: ok, $executed executions${took:+ in $took s}"
  else
    echo "fuzz.sh: $t: FAILED (exit $status) after $executed executions; input in $findings, tail of $log:"
    tail -30 "$log"
    failed+=("$t")
  fi
done
[ ${#failed[@]} -eq 0 ] || { echo "fuzz.sh: failures in ${failed[*]}" >&2; exit 1; }
