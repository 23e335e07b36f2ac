#!/usr/bin/env bash
# Fuzzing on a host with more cores than this one (the GPU host has 16), in two steps.
#
#   tools/fuzz-device.sh prepare [TARGET...]
#       here: builds the targets (tools/fuzz.sh --build-only) and assembles build-fuzz-carry/ with the
#       programs of the targets named (default: all), each one's work corpus so far
#       (build-fuzz/corpus/TARGET) and the commit. The device tool carries at most 64 MiB: name only
#       the targets to run there.
#   tools/fuzz-device.sh run SECONDS TARGET:JOBS...
#       there (carry ["build-fuzz-carry"]): JOBS independent libFuzzer processes per target, all at
#       once, each for SECONDS, from the committed seeds and the carried work corpus. Writes to $OUT
#       (default ./fuzz-device-out) summary.txt (executions per target summed over its processes,
#       failures with the tails of their logs), findings.tar.gz when an input failed, and corpus.tar.gz
#       (the work corpora grown there: unpack in build-fuzz/ to keep fuzzing from them here).
# Exits 1 when any process failed.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
carry=$root/build-fuzz-carry
# shellcheck source=tools/fuzz-targets.sh
. "$root/tools/fuzz-targets.sh"

prepare() {
  set -e
  local targets=("$@")
  [ ${#targets[@]} -gt 0 ] || targets=("${all_targets[@]}")
  "$root/tools/fuzz.sh" --build-only
  local build=${NCAST_FUZZ_BUILD_DIR:-$root/build-fuzz}
  rm -rf "$carry"
  mkdir -p "$carry/corpus"
  for t in "${targets[@]}"; do
    [[ " ${all_targets[*]} " == *" $t "* ]] || { echo "fuzz-device.sh: no target $t (${all_targets[*]})" >&2; exit 2; }
    cp "$build/tests/fuzz/fuzz_$t" "$carry/"
    mkdir -p "$carry/corpus/$t"
    [ -d "$build/corpus/$t" ] && cp -r "$build/corpus/$t/." "$carry/corpus/$t/"
  done
  # The commit, and the files that differed from it when the targets were built.
  { git -C "$root" rev-parse --short HEAD; git -C "$root" status --short --untracked-files=no; } |
    paste -sd ' ' >"$carry/COMMIT"
  du -sh "$carry"
}

run() {
  local seconds=${1:?seconds}
  shift
  [ $# -gt 0 ] || { echo "fuzz-device.sh run: name at least one TARGET:JOBS" >&2; exit 2; }
  local out=${OUT:-$root/fuzz-device-out} logs
  logs=$(mktemp -d)
  mkdir -p "$out" "$logs/findings"
  # Throughput over completeness of reports: vanilla scheduling (entropic's bookkeeping took 13 % of
  # rs_shards' time) and short allocation stacks; replay a finding here for the full report.
  export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:malloc_context_size=4"
  export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
  local spec t jobs pids=() names=()
  for spec in "$@"; do
    t=${spec%%:*} jobs=${spec#*:}
    [[ " ${all_targets[*]} " == *" $t "* && $jobs =~ ^[1-9][0-9]*$ ]] || { echo "fuzz-device.sh: bad TARGET:JOBS $spec" >&2; exit 2; }
    mkdir -p "$logs/findings/$t"
    for ((j = 0; j < jobs; ++j)); do
      "$carry/fuzz_$t" -max_total_time="$seconds" -max_len="$(max_len "$t")" -timeout=30 -entropic=0 -print_final_stats=1 \
        -artifact_prefix="$logs/findings/$t/" "$carry/corpus/$t" "$root/tests/fuzz/corpus/$t" \
        >"$logs/$t.$j.log" 2>&1 &
      pids+=($!) names+=("$t.$j")
    done
  done
  local failed=() i
  for i in "${!pids[@]}"; do wait "${pids[$i]}" || failed+=("${names[$i]}"); done

  {
    echo "fuzz-device.sh at $(cat "$carry/COMMIT"), $(nproc) cores, $seconds s per process, $(date -u +%FT%TZ)"
    for spec in "$@"; do
      t=${spec%%:*}
      local total=0 n
      for log in "$logs/$t".*.log; do
        n=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
        total=$((total + n))
      done
      echo "$t: $total executions in ${spec#*:} processes"
    done
    for name in "${failed[@]}"; do
      echo "FAILED $name:"
      tail -40 "$logs/$name.log"
    done
  } | tee "$out/summary.txt"
  tar -C "$logs" -czf "$out/findings.tar.gz" findings
  [ ${#failed[@]} -gt 0 ] || rm -f "$out/findings.tar.gz"
  tar -C "$carry" -czf "$out/corpus.tar.gz" corpus
  rm -rf "$logs"
  [ ${#failed[@]} -eq 0 ]
}

case "${1:-}" in
  prepare) shift; prepare "$@" ;;
  run) shift; run "$@" ;;
  *) sed -n '2,16p' "$0"; exit 2 ;;
esac
