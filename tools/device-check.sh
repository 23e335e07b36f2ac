#!/usr/bin/env bash
# The GPU check of ncast, in two steps.
#
#   tools/device-check.sh prepare [BUILD_DIR]   on the build machine (CUDA toolkit, Boost, ISA-L):
#       builds the GPU targets in BUILD_DIR (default build-gpu) and assembles build-gpu-carry/ with
#       the test and bench programs (the bench's seed-style baselines have their own tests), libisal.so.2 (GPU hosts have no ISA-L) and the commit they were
#       built from.
#   tools/device-check.sh run [CARRY_DIR]       on the GPU host (default build-gpu-carry):
#       runs the GPU tests, the bench baselines' tests and the RS codec's tests (on the CUDA engine, which backend auto picks
#       there), the shared RS library's tests on its CUDA module, the GPU benchmarks (ncast-bench gpu), then the GPU tests again under
#       compute-sanitizer memcheck and racecheck; writes logs, JSON lines and a markdown results
#       table to $OUT (default ./device-check-out) and prints a short table last.
#
# With the device tool of this workplace: carry ["build-gpu-carry"] and run
#   tools/device-check.sh run
# then copy $OUT/results.md to bench/results/.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
mode=${1:-}

prepare() {
  local build=${1:-$root/build-gpu}
  local carry=$root/build-gpu-carry
  set -e
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DNCAST_ENABLE_CUDA=ON >/dev/null
  cmake --build "$build" -j "$(nproc)" --target gpu_tests bench_baselines_tests rs_tests ncast-bench \
    rs_library_backend_tests
  rm -rf "$carry"
  mkdir -p "$carry/ncast"
  cp "$build/tests/gpu/gpu_tests" "$build/tests/tools/bench/bench_baselines_tests" "$build/tests/coding/rs/rs_tests" \
    "$build/tools/bench/ncast-bench" "$build/tests/install/rs_library_backend_tests" "$carry/"
  # The shared library and its module laid out as installed: the module in ncast/ beside the library.
  cp -L "$build/coding/rs/library/libncast_rs.so.0" "$carry/"
  cp "$build/coding/rs/library/ncast/libncast_rs_cuda.so" "$carry/ncast/"
  cp -L "$(ldconfig -p | awk '/libisal\.so\.2 /{print $NF; exit}')" "$carry/libisal.so.2"
  local commit
  commit=$(git -C "$root" rev-parse --short HEAD)
  git -C "$root" diff --quiet HEAD -- gpu tests/gpu tests/tools/bench tools/bench || commit="$commit+uncommitted"
  echo "$commit" >"$carry/COMMIT"
  du -sh "$carry"
}

run() {
  local carry=${1:-$root/build-gpu-carry}
  local out=${OUT:-$root/device-check-out}
  mkdir -p "$out"
  export LD_LIBRARY_PATH="$carry${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export NCAST_TEST_DATA_DIR="$root/tests/data"  # the known-answer files, wherever this tree now lies
  [ -x "$carry/gpu_tests" ] && [ -x "$carry/bench_baselines_tests" ] && [ -x "$carry/ncast-bench" ] || {
    echo "device-check: $carry lacks gpu_tests, bench_baselines_tests or ncast-bench; run 'tools/device-check.sh prepare' where ncast builds" >&2
    exit 2
  }
  local log=$out/device-check.log
  : >"$log"
  say() { echo "$*" | tee -a "$log"; }

  local gpu driver commit date status=0
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
  driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1)
  commit=$(cat "$carry/COMMIT" 2>/dev/null || echo unknown)
  date=$(date -u +%Y-%m-%d)
  say "device-check: $date, GPU ${gpu:-none}, driver ${driver:-none}, commit $commit"

  # 1. The GPU test suites, plain: every kernel against the CPU engine, the bench's baselines too.
  say "== tests"
  local tests_rc=0 skipped=0 suite count
  for suite in gpu_tests bench_baselines_tests; do
    "$carry/$suite" --gtest_brief=1 >"$out/$suite.log" 2>&1 || tests_rc=1
    tail -3 "$out/$suite.log" | tee -a "$log"
    count=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) tests\{0,1\}[,.].*/\1/p' "$out/$suite.log" | head -1)
    skipped=$((skipped + ${count:-0}))
  done
  [ "$tests_rc" -eq 0 ] || status=1
  # Three tests are for machines without a device; anything else skipped means a GPU test did not run.
  [ "$skipped" -le 3 ] || { say "device-check: $skipped tests skipped on a GPU host"; status=1; }
  say "== RS codec tests on the CUDA engine"
  timeout 300 "$carry/rs_tests" --gtest_brief=1 >"$out/rs-tests.log" 2>&1 || status=1
  tail -3 "$out/rs-tests.log" | tee -a "$log"
  say "== the shared RS library on its CUDA module"
  timeout 120 "$carry/rs_library_backend_tests" --gtest_brief=1 >"$out/rs-library.log" 2>&1 || status=1
  tail -3 "$out/rs-library.log" | tee -a "$log"
  ! grep -q SKIPPED "$out/rs-library.log" || { say "device-check: the library did not get the CUDA engine"; status=1; }

  # 2. Benchmarks: numbers first, so a slow sanitizer cannot cost them.
  say "== benchmarks"
  "$carry/ncast-bench" gpu --all-tiles --json >"$out/bench.jsonl" 2>>"$log" || { say "device-check: benchmark failed"; status=1; }

  # 3. The same tests under compute-sanitizer. The largest shapes are left to the plain run: the
  #    sanitizers instrument every access and would take minutes on them, and they add no new code path.
  # OutOfMemory* fails a cudaMalloc on purpose, which memcheck would count as an error.
  local san_filter='-*n128_L65536:*n256_L65536:*OutOfMemory*:*round1:*round32:*round64'
  local limit=${NCAST_SANITIZER_TIMEOUT:-300}  # seconds per sanitizer run
  # racecheck runs in two halves at once (it is bound by the host's processing of each launch): the
  # kernels on the small shapes, then the baselines; and the products, engines and decoders (85 s and
  # 200 s on the H100).
  local race_kernels='*n1_*:*n2_*:*n17_*:*n32_*-*L65536'
  local race_baselines='*n1_*:*n2_*:*n17_*:*n32_*:SeedKernelProducts.*-*L65536'
  local race_rest='KernelProducts.*:KernelBatch.*:TensorKernel.*:CudaEngine.*:BatchDecoder.*:ProgressiveDecoder.*:*round7'
  # sanitize TOOL SUITE FILTER: one suite under one tool, its output appended to $out/TOOL.log.
  sanitize() {
    local extra=()
    [ "$1" = memcheck ] && extra=(--leak-check full)
    [ "$1" = racecheck ] && extra=(--racecheck-report all)
    timeout "$limit" compute-sanitizer --tool "$1" --error-exitcode 99 "${extra[@]}" \
      "$carry/$2" --gtest_brief=1 --gtest_filter="$3" >>"$out/$1-$4.log" 2>&1
  }
  say "== compute-sanitizer memcheck"
  local mem_rc=0 rc
  : >"$out/memcheck-0.log"
  for suite in gpu_tests bench_baselines_tests; do
    sanitize memcheck "$suite" "$san_filter" 0
    rc=$?
    [ "$rc" -eq 0 ] || mem_rc=$rc
  done
  mv "$out/memcheck-0.log" "$out/memcheck.log"
  grep 'ERROR SUMMARY' "$out/memcheck.log" | tee -a "$log"
  say "== compute-sanitizer racecheck"
  : >"$out/racecheck-0.log"
  : >"$out/racecheck-1.log"
  local pids=()
  (
    sanitize racecheck gpu_tests "$race_kernels" 0
    rc=$?
    sanitize racecheck bench_baselines_tests "$race_baselines" 0 || exit
    exit $rc
  ) &
  pids+=($!)
  sanitize racecheck gpu_tests "$race_rest" 1 &
  pids+=($!)
  local race_rc=0 pid
  for pid in "${pids[@]}"; do
    wait "$pid"
    rc=$?
    [ "$rc" -eq 0 ] || race_rc=$rc
  done
  cat "$out/racecheck-0.log" "$out/racecheck-1.log" >"$out/racecheck.log" && rm -f "$out"/racecheck-[01].log
  grep 'RACECHECK SUMMARY' "$out/racecheck.log" | tee -a "$log"
  [ "$mem_rc" -eq 0 ] && [ "$race_rc" -eq 0 ] || status=1

  # 4. Results: a markdown table for bench/results/, and the short table printed last.
  python3 - "$out/bench.jsonl" "$out/results.md" "$date" "$gpu" "$driver" "$commit" \
    "$tests_rc" "$skipped" "$mem_rc" "$race_rc" <<'PY' | tee -a "$log"
import json, sys
path, md, date, gpu, driver, commit, tests_rc, skipped, mem_rc, race_rc = sys.argv[1:]
rows = [json.loads(l) for l in open(path) if l.startswith("{")]
def verdict(rc):
    return {"0": "clean", "124": "timed out", "99": "ERRORS"}.get(rc, "failed (rc %s)" % rc)
lines = [f"# GPU results, {date}", "",
         f"GPU {gpu}, driver {driver}, commit {commit}; `tools/device-check.sh run`", "",
         f"tests: {'passed' if tests_rc == '0' else 'FAILED'} ({skipped} skipped); "
         f"memcheck: {verdict(mem_rc)}; racecheck: {verdict(race_rc)}", "",
         "| case | kernel | shape | GB/s | counts | vs product-table | vs log/exp | vs Nuclei loop | anchor |",
         "|---|---|---|---:|---|---:|---:|---:|---|"]
for r in rows:
    shape = " ".join(f"{k}={r[k]}" for k in ("n", "k", "m", "len") if k in r)
    seed = r.get("anchor", "") == "gpu product-table"
    f = lambda key: f"{r[key]:.2f}x" if key in r else ""
    anchor = "" if seed or "anchor" not in r else f"{r['ratio']:.2f}x {r['anchor']} {r['anchor_gb_per_s']:.1f} GB/s"
    rate = f"{r['gb_per_s']:.1f}" + (f" ({r['us_per_call']:.0f} µs/call)" if "us_per_call" in r else "")
    lines.append(f"| {r['case']} | {r['level']} | {shape} | {rate} | {r['counts']} | "
                 f"{f('ratio') if seed else ''} | {f('vs_gibraltar_logexp')} | {f('vs_nuclei_loop')} | {anchor} |")
# Issue 8's acceptance points, from the rows above.
def best(case, pred=lambda r: True):
    got = [r for r in rows if r["case"] == case and pred(r)]
    return max(got, key=lambda r: r["gb_per_s"]) if got else None
def point(text, row, value, target, higher=True):
    if row is None:
        return f"- {text}: not measured"
    ok = value >= target if higher else value <= target
    return f"- {text}: {value:.1f} ({row['level']}) vs {target}: {'met' if ok else 'NOT met'}"
fast = lambda r: r["level"] not in ("nuclei-loop", "gibraltar-logexp", "product-table")
r128, r32, rsd, rsh = best("rlnc128", fast), best("rlnc32", fast), best("rs-device", fast), best("rs-host", fast)
dec = next((r for r in rows if r["case"] == "decode" and r.get("decoder_kernel") == "auto"), None)
one = best("decode-one")
lines += ["", "Issue 8 acceptance (this run):",
          point("RLNC encode n=128 L=4096, GB/s", r128, r128 and r128["gb_per_s"], 80),
          point("RLNC encode n=32 L=4096, GB/s", r32, r32 and r32["gb_per_s"], 250),
          point("RS 10+4 device-resident, GB/s of data", rsd, rsd and rsd["gb_per_s"], 1000),
          point("RS 10+4 host-resident pipelined, GB/s", rsh, rsh and rsh["gb_per_s"], 45),
          point("batched decode, 264 generations n=128 L=4096, GB/s", dec, dec and dec["gb_per_s"], 100),
          point("one generation, µs", one, one and one["us_per_call"], 300, higher=False)]
# Issue 5's (the tensor kernel), with the CUDA-core kernels of the same run beside them.
tensor = lambda r: r["level"] == "tensor-b1"
core = lambda r: r["level"] in ("prmt", "bitslice")
def pair(text, case, target):
    t, c = best(case, tensor), best(case, core)
    line = point(text, t, t and t["gb_per_s"], target)
    return line + (f"; CUDA-core best {c['gb_per_s']:.1f} ({c['level']})" if c else "")
lines += ["", "Issue 5 acceptance (this run):",
          pair("RLNC encode n=128 L=4096, GB/s", "rlnc128", 400),
          pair("RLNC encode n=32 L=4096, GB/s", "rlnc32", 800),
          pair("RS 10+4 device-resident, GB/s of data", "rs-device", 1500),
          pair("RS 32+8 device-resident, GB/s of data", "rs-device-32", 1500),
          pair("decode payload step, 264 generations n=128, GB/s", "decode-payload", 200)]
open(md, "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
  say "device-check: $([ $status -eq 0 ] && echo OK || echo FAILED); logs in $out"
  exit $status
}

case "$mode" in
  prepare) shift; prepare "$@" ;;
  run) shift; run "$@" ;;
  *) echo "usage: tools/device-check.sh prepare [BUILD_DIR] | run [CARRY_DIR]" >&2; exit 2 ;;
esac
