#!/usr/bin/env bash
# The large-swarm run of ncast (issue 9) on the GPU host (16 cores + H100), in two steps.
#
#   tools/swarm-device.sh prepare [BUILD_DIR]   on the build machine (CUDA toolkit, Boost, ISA-L):
#       builds ncast-server (CUDA engine), ncast-swarm and ncast-bench in BUILD_DIR (default
#       build-swarm-gpu) and assembles build-swarm-carry/ with them, the shared libraries a bare GPU
#       host may lack (libisal, libcrypto) and the commit they were built from.
#   tools/swarm-device.sh run [CARRY_DIR]       on the GPU host (default build-swarm-carry):
#       1. ncast-bench serve: the largest swarm of realtime peers at 768 kbit/s (MTU-safe symbols,
#          n=128, L=1024) that the servers keep up with (< 1 % late), from 2,000 peers up, with the
#          raw UDP anchor. One ncast-server (NCAST_SERVERS) of 5 threads (NCAST_SERVER_THREADS,
#          ncast-server --threads: sockets sharing the port) on CPUs 0..4, the GPU engine shared; the
#          swarm on the other CPUs, decoding batched on the GPU (ncast-swarm --decoder gpu);
#       2. ncast-swarm, 10,000 realtime peers over the same servers, 30 % Bernoulli loss, then 10 %
#          bursty loss (Gilbert-Elliott, mean burst 5): every peer completes? symbols per needed
#          symbol against 1/(1 - loss)?
#       Writes results.md, serve.jsonl, serve.dat, serve.gp (and serve.png when gnuplot is there), the two
#       swarm reports and logs.tar.gz to $OUT (default ./swarm-device-out): eight files at most, what the
#       device tool brings back. Prints results.md last.
#
# With the device tool of this workplace: carry ["build-swarm-carry"], timeout_s 600, and run
#   tools/swarm-device.sh run
# then copy $OUT/results.md, serve.jsonl, serve.dat and serve.gp to bench/results/ (draw the plot
# there with `gnuplot serve.gp` if the host had no gnuplot).
#
# Knobs (environment): NCAST_SWARM_PEERS (10000), NCAST_SERVERS (1), NCAST_SERVER_THREADS (5: with paced
# bursts the server needs half the CPU per GB it did, and the swarm runs out first; 4 kept up with
# 10,000 peers without loss but not with 30 % Bernoulli loss, which sends 1.43 times the datagrams),
# NCAST_SERVE_START (10000), NCAST_SERVE_BUDGET (330 s), NCAST_MEDIA_SECONDS (20), NCAST_DECODER (gpu),
# NCAST_VERIFY_FRACTION (1: the fraction of simulated peers that decode and verify, ncast-swarm
# --verify-fraction; the others count ranks from the coefficients and ACK the same), NCAST_SERVE_MAX
# (40000: the search's largest swarm; 0 skips the search), NCAST_LOSS_RUNS (1: how many times the
# loss runs are repeated; with more, their reports stay in logs.tar.gz), NCAST_LOSS_MODELS (the swarm
# runs' loss models, ncast-swarm --loss: "bernoulli:0.3 burst:0.1:5"; "none" runs one without loss),
# NCAST_THREAD_LOAD (1: sample every thread of the servers and the swarm each second during those runs,
# tools/thread-load.py, and add each process's busiest threads to the results), NCAST_SWARM_THREADS (the swarm's worker threads; default one per swarm CPU: the GPU decode batcher's
# thread mostly waits on the GPU, and ten threads kept up with 9,375 peers where nine kept up with 8,750).
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
mode=${1:-}

prepare() {
  local build=${1:-$root/build-swarm-gpu}
  local carry=$root/build-swarm-carry
  set -e
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DNCAST_ENABLE_CUDA=ON >/dev/null
  cmake --build "$build" -j "$(nproc)" --target ncast-server ncast-swarm ncast-bench
  rm -rf "$carry"
  mkdir -p "$carry"
  cp "$build/server/ncast-server" "$build/peer/swarm/ncast-swarm" "$build/tools/bench/ncast-bench" "$carry/"
  for lib in libisal.so.2 libcrypto.so.3; do
    cp -L "$(ldconfig -p | awk -v l="$lib" '$1 == l {print $NF; exit}')" "$carry/$lib"
  done
  local commit
  commit=$(git -C "$root" rev-parse --short HEAD)
  git -C "$root" diff --quiet HEAD -- server peer tools/bench || commit="$commit+uncommitted"
  echo "$commit" >"$carry/COMMIT"
  du -sh "$carry"
}

run() {
  local carry=${1:-$root/build-swarm-carry}
  local out=${OUT:-$root/swarm-device-out}
  # Logs and scratch in a work folder; $OUT gets at most eight files (what the device tool returns).
  local work
  work=$(mktemp -d)
  local peers=${NCAST_SWARM_PEERS:-10000} start=${NCAST_SERVE_START:-10000} budget=${NCAST_SERVE_BUDGET:-330}
  local media_s=${NCAST_MEDIA_SECONDS:-20} nservers=${NCAST_SERVERS:-1} sthreads=${NCAST_SERVER_THREADS:-5}
  local decoder=${NCAST_DECODER:-gpu} verify=${NCAST_VERIFY_FRACTION:-1} max=${NCAST_SERVE_MAX:-40000}
  local runs=${NCAST_LOSS_RUNS:-1} loss_models=${NCAST_LOSS_MODELS:-bernoulli:0.3 burst:0.1:5}
  local thread_load=${NCAST_THREAD_LOAD:-0}
  [[ $max =~ ^[0-9]+$ && $runs =~ ^[1-9][0-9]*$ ]] ||
    { echo "swarm-device: NCAST_SERVE_MAX must be a whole number and NCAST_LOSS_RUNS a positive one" >&2; exit 2; }
  [[ $thread_load == [01] ]] || { echo "swarm-device: NCAST_THREAD_LOAD must be 0 or 1, not '$thread_load'" >&2; exit 2; }
  mkdir -p "$out"
  export LD_LIBRARY_PATH="$carry${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  for p in ncast-server ncast-swarm ncast-bench; do
    [ -x "$carry/$p" ] || { echo "swarm-device: $carry lacks $p; run 'tools/swarm-device.sh prepare' where ncast builds" >&2; exit 2; }
  done
  # A socket per group of 64 simulated peers (ncast-swarm --peers-per-socket: 40,000 peers need about
  # 700 descriptors, well under the host's hard 20,000), and kernel buffers for a few hundred Mbit/s on loopback.
  ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
  sysctl -qw net.core.rmem_max=8388608 net.core.wmem_max=8388608 2>/dev/null || true
  local cores last threads scores
  cores=$(nproc)
  last=$((cores - 1))
  scores=$((nservers * sthreads))  # the servers' CPUs: 0 .. scores-1
  [ "$scores" -lt "$cores" ] || { echo "swarm-device: $nservers servers of $sthreads threads leave no CPU for the swarm on $cores cores" >&2; exit 2; }
  [[ -z ${NCAST_SWARM_THREADS:-} || $NCAST_SWARM_THREADS =~ ^[1-9][0-9]*$ ]] ||
    { echo "swarm-device: NCAST_SWARM_THREADS must be a positive whole number, not '$NCAST_SWARM_THREADS'" >&2; exit 2; }
  threads=${NCAST_SWARM_THREADS:-$((cores - scores))}
  local gpu commit date
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
  commit=$(cat "$carry/COMMIT" 2>/dev/null || echo unknown)
  date=$(date -u +%Y-%m-%d)
  echo "swarm-device: $date, ${gpu:-no GPU}, $cores cores, commit $commit, ulimit -n $(ulimit -n)"

  # 1. The largest swarm the servers keep up with: servers on CPUs 0..scores-1, the swarm on the rest.
  if [ "$max" -gt 0 ]; then
    taskset -c "$scores-$last" "$carry/ncast-bench" serve --json --server-bin "$carry/ncast-server" --servers "$nservers" \
      --server-threads "$sthreads" --server-cpu 0 --threads "$threads" --bitrate 768k --media-seconds "$media_s" --start "$start" \
      --max "$max" --verify-fraction "$verify" --budget "$budget" --plot "$work/serve.png" >"$work/serve.jsonl" 2>"$work/serve.err"
    echo "serve: exit $?"
  else
    echo "serve: skipped (NCAST_SERVE_MAX=0)" | tee "$work/serve.jsonl"
  fi

  # 2. Loss: a swarm of $peers realtime peers under each model, spread over the servers.
  head -c $((media_s * 96000)) /dev/urandom >"$work/media"
  local models=() r m
  for ((r = 1; r <= runs; ++r)); do for m in $loss_models; do models+=("$m@$r"); done; done
  for entry in "${models[@]}"; do
    local model=${entry%@*} run=${entry##*@}
    local tag=${model%%:*}$([ "$runs" -gt 1 ] && echo "-$run") pids=() args=() i
    for ((i = 0; i < nservers; ++i)); do
      taskset -c "$((i * sthreads))-$((i * sthreads + sthreads - 1))" "$carry/ncast-server" --file "$work/media" \
        --listen 127.0.0.1:0 --metrics 127.0.0.1:0 --bitrate 768k --threads "$sthreads" --max-rate 1000G \
        --max-sessions $((peers / nservers + 1000)) --max-sessions-per-source 0 --stats-interval 0 >"$work/server-$tag-$i.log" 2>"$work/server-$tag-$i.err" &
      pids+=($!)
    done
    for ((i = 0; i < nservers; ++i)); do
      local log=$work/server-$tag-$i.log
      for _ in $(seq 1 300); do grep -q '"event":"listening"' "$log" 2>/dev/null && break; sleep 0.1; done
      args+=(-s "127.0.0.1:$(grep -o '"port":[0-9]*' "$log" | head -1 | cut -d: -f2)")
      args+=(--metrics "$(grep -o '"metrics":"[0-9.:]*' "$log" | cut -d'"' -f4)")
    done
    taskset -c "$scores-$last" "$carry/ncast-swarm" "${args[@]}" --server-mode spread --stream media -n "$peers" \
      --threads "$threads" --decoder "$decoder" --verify-fraction "$verify" --loss "$model" --ramp "$((peers / 1500 + 1))" --timeout 150 --progress off \
      --report "$work/swarm-$tag.json" >"$work/swarm-$tag.txt" 2>"$work/swarm-$tag.err" &
    local swarm=$! sampler=
    if [ "$thread_load" = 1 ]; then
      python3 "$root/tools/thread-load.py" sample "$work/threads-$tag.raw" "$swarm" "${pids[@]}" &
      sampler=$!
    fi
    wait "$swarm"
    echo "swarm $model: exit $?"
    if [ -n "$sampler" ]; then
      kill -TERM "$sampler" 2>/dev/null
      wait "$sampler" 2>/dev/null
      python3 "$root/tools/thread-load.py" report "$work/threads-$tag.raw" >>"$work/swarm-$tag.txt"
    fi
    kill -TERM "${pids[@]}" 2>/dev/null
    wait "${pids[@]}" 2>/dev/null
  done
  rm -f "$work/media"
  # Keep the reports small enough to come back: the aggregate only (the table has the rest).
  for f in "$work"/swarm-*.json; do
    [ -s "$f" ] && python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); r.pop("per_peer",None); json.dump(r,open(sys.argv[1],"w"))' "$f" 2>/dev/null
  done

  {
    echo "# ncast-bench serve and ncast-swarm on the GPU host"
    echo
    echo "$date, ${gpu:-no GPU}, $cores cores, commit $commit. $nservers server(s) of $sthreads threads on CPUs 0-$((scores - 1)),"
    echo "swarm on CPUs $scores-$last (decoder $decoder in the loss runs, auto in the search: gpu from 256 peers), loopback,"
    echo "768 kbit/s realtime peers, n=128, L=1024; a fraction $verify of the peers decode and verify (the others count ranks)."
    echo
    echo '```'
    cat "$work/serve.jsonl"
    echo '```'
    for f in "$work"/swarm-*.txt; do
      echo
      echo "## $peers peers, loss $(basename "$f" .txt | cut -d- -f2-)"
      echo
      echo '```'
      cat "$f"
      echo '```'
    done
  } >"$out/results.md"
  for f in serve.jsonl serve.dat serve.gp serve.png $([ "$runs" -eq 1 ] && echo swarm-bernoulli.json swarm-burst.json); do
    [ -f "$work/$f" ] && cp "$work/$f" "$out/"
  done
  tar -czf "$out/logs.tar.gz" -C "$work" --exclude media . 2>/dev/null
  rm -rf "$work"
  cat "$out/results.md"
}

case "$mode" in
  prepare) shift; prepare "$@" ;;
  run) shift; run "$@" ;;
  *) echo "usage: tools/swarm-device.sh prepare [BUILD_DIR] | run [CARRY_DIR]" >&2; exit 2 ;;
esac
