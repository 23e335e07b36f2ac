#!/usr/bin/env bash
# The host memory budget measured (issue 19): start-up time and resident memory of ncast-server over a
# 20 GiB --dir library while peers fetch different files, and over a 24-hour-equivalent live stream
# (10.75 GiB through a pipe as fast as the server takes it). Prints what bench/results/*-memory-budget.md
# quotes. Usage: tools/memory_bench.sh BUILD_DIR WORK_DIR [OLD_SERVER_BINARY]
set -euo pipefail
build=$1 work=$2 old=${3:-}
server=$build/server/ncast-server peer=$build/peer/ncast-peer
mkdir -p "$work/lib"
cd "$work"

# The library: five 4 GiB files, each 256 MiB of random octets followed by a sparse (zero) tail.
[ -f rand256 ] || head -c 256M /dev/urandom > rand256
for i in 0 1 2 3 4; do
  [ -f lib/f$i.bin ] || { cp rand256 lib/f$i.bin; truncate -s 4G lib/f$i.bin; }
done

rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
# Starts ncast-server with the given arguments; sets pid and the seconds it took to print "listening".
start() {
  : > srv.out
  local t0; t0=$(date +%s.%N)
  "$@" --listen 127.0.0.1:0 --stats-interval 0 > srv.out 2> srv.err &
  pid=$!
  until grep -q listening srv.out; do sleep 0.005; kill -0 $pid 2>/dev/null || { cat srv.err; exit 1; }; done
  startup=$(echo "$(date +%s.%N) - $t0" | bc)
  port=$(grep -o '"port":[0-9]*' srv.out | cut -d: -f2)
}
# Samples the server's RSS every 0.5 s into rss.log until stopped.
sample() { while kill -0 $pid 2>/dev/null; do echo "$(date +%s.%N) $(rss_kb $pid)" >> rss.log; sleep 0.5; done; }

echo "== start-up over the 20 GiB library (page cache dropped first), 3 runs"
for run in 1 2 3; do
  sync; echo 3 > /proc/sys/vm/drop_caches
  start "$server" --dir lib
  echo "run $run: listening after ${startup} s, RSS $(rss_kb $pid) kB"
  kill $pid; wait $pid || true
done

if [ -n "$old" ]; then
  echo "== the old server (whole files in memory) over ONE 1 GiB file, 3 runs"
  [ -f one.bin ] || { cp rand256 one.bin; truncate -s 1G one.bin; }
  for run in 1 2 3; do
    start "$old" --file one.bin
    echo "run $run: listening after ${startup} s, RSS $(rss_kb $pid) kB"
    kill $pid; wait $pid || true
  done
fi

echo "== four peers fetch four files (download mode, 25 s each), default --host-memory-mb 512, 3 runs"
for run in 1 2 3; do
  start "$server" --dir lib
  rm -f rss.log; sample & sampler=$!
  peers=()
  for i in 0 1 2 3; do
    "$peer" -s 127.0.0.1:$port --stream f$i.bin --start $((i * 600)) -o peer$i.out --progress off --timeout 25 \
      2> peer$i.err & peers+=($!)
  done
  for p in "${peers[@]}"; do wait $p || true; done
  fetched=0
  for i in 0 1 2 3; do fetched=$((fetched + $(stat -c %s peer$i.out))); done
  kill $pid; wait $pid || true; wait $sampler || true
  echo "run $run: fetched $((fetched >> 20)) MiB in all; RSS max $(sort -k2 -n rss.log | tail -1 | cut -d' ' -f2) kB," \
    "at the end $(tail -1 rss.log | cut -d' ' -f2) kB"
  rm -f peer*.out
done

echo "== live: 43 x 256 MiB (10.75 GiB, 24 h at 1.07 Mbit/s) through a pipe, default --live-window 256MB, a peer"
echo "   joined at the live edge (download mode: it falls behind the window and is moved), 3 runs"
for run in 1 2 3; do
  rm -f rss.log feed.end live.fifo
  mkfifo live.fifo
  start "$server" --live ch=live.fifo
  t0=$(date +%s.%N)
  { for i in $(seq 43); do cat rand256; done; date +%s.%N > feed.end; } > live.fifo &
  feeder=$!
  sample & sampler=$!
  sleep 1
  "$peer" -s 127.0.0.1:$port --stream ch --start live -o live.out --progress off --timeout 15 2> live.err &
  lpeer=$!
  until [ -s feed.end ]; do sleep 0.5; done
  wait $feeder
  echo "run $run: fed in $(echo "$(cat feed.end) - $t0" | bc) s"
  wait $lpeer || true
  sleep 1
  kill $pid; wait $pid || true; wait $sampler || true
  awk -v t0="$t0" 'NR % 10 == 1 {printf "  t=%5.1f s RSS %d kB\n", $1 - t0, $2}' rss.log
  echo "  RSS max $(sort -k2 -n rss.log | tail -1 | cut -d' ' -f2) kB, at the end $(tail -1 rss.log | cut -d' ' -f2) kB;" \
    "peer: $(grep -o '"rejoins":[0-9]*' live.err | tail -1) $(grep -o '"skipped":[0-9]*' live.err | tail -1), wrote $(( $(stat -c %s live.out) >> 20 )) MiB"
  rm -f live.out
done
