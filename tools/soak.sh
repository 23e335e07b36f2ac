#!/usr/bin/env bash
# Soak test on loopback: one ncast-server and a crowd of ncast-peer processes for a fixed time, with
# simulated loss and churn (peers that finish are replaced; some are killed mid-stream, politely or
# not, and replaced). Passes when no peer that ran to its end failed, the server's resident memory
# grew less than the limit after the warm-up, and its open file descriptors stayed flat. Every loop
# is bounded; everything started is stopped on exit.
#   NCAST_SOAK_SECONDS   length of the run (default 600)
#   NCAST_SOAK_WARMUP    seconds before the memory baseline is taken (default 60)
#   NCAST_SOAK_PEERS     peers running at once (default 200)
#   NCAST_SOAK_LOSS      fraction of datagrams each peer drops on arrival (default 0.1)
#   NCAST_SOAK_KILL      fraction of peers killed mid-stream (default 0.2; half SIGTERM, half SIGKILL)
#   NCAST_SOAK_RSS_LIMIT largest RSS growth after warm-up, percent (default 5)
#   NCAST_SERVER_BIN, NCAST_PEER_BIN  the programs (default: build them with tools/build.sh)
# Prints a progress line per sample and a final JSON summary line ("event":"soak").
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${NCAST_BUILD_DIR:-$root/build}
seconds=${NCAST_SOAK_SECONDS:-600}
warmup=${NCAST_SOAK_WARMUP:-60}
peers=${NCAST_SOAK_PEERS:-200}
loss=${NCAST_SOAK_LOSS:-0.1}
kill_fraction=${NCAST_SOAK_KILL:-0.2}
rss_limit=${NCAST_SOAK_RSS_LIMIT:-5}
if [ -z "${NCAST_SERVER_BIN:-}" ] || [ -z "${NCAST_PEER_BIN:-}" ]; then
  "$root/tools/build.sh" >/dev/null
fi
server_bin=${NCAST_SERVER_BIN:-$build/server/ncast-server}
peer_bin=${NCAST_PEER_BIN:-$build/peer/ncast-peer}
[ "$warmup" -lt "$seconds" ] || { echo "soak: the warm-up must be shorter than the run" >&2; exit 2; }

work=$(mktemp -d)
server_pid=
declare -A started_at=() kill_at=() kill_sig=()
# Signals the peer run by subshell pid (once it has recorded its own pid); true when it could.
signal_peer() {
  local file="$work/peer${started_at[$1]}.pid"
  [ -s "$file" ] && kill "-$2" "$(cat "$file")" 2>/dev/null
}
cleanup() {
  for pid in "${!started_at[@]}"; do signal_peer "$pid" KILL || kill -KILL "$pid" 2>/dev/null || true; done
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then kill -KILL "$server_pid"; fi
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# A stream each peer takes about 12 s to fetch at its pace: 1.5 MB at 1 Mbit/s.
head -c 1500000 /dev/urandom >"$work/media"
"$server_bin" --file "$work/media" --listen 127.0.0.1:0 --metrics 127.0.0.1:0 --bitrate 1M --coded-cache-mb 16 \
  --idle-timeout 3 --max-sessions-per-source 0 --stats-interval 0 >"$work/server.log" 2>"$work/server.err" &
server_pid=$!
for _ in $(seq 1 200); do grep -q '"event":"listening"' "$work/server.log" 2>/dev/null && break; sleep 0.05; done
grep -q '"event":"listening"' "$work/server.log" || { cat "$work/server.err" >&2; exit 1; }
port=$(grep -o '"port":[0-9]*' "$work/server.log" | head -1 | cut -d: -f2)

rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$server_pid/status"; }
fds() { find "/proc/$server_pid/fd" -mindepth 1 -maxdepth 1 | wc -l; }
now() { date +%s.%N; }
# Seconds since the start, as an integer number of milliseconds.
elapsed_ms() { awk -v s="$start" -v n="$(now)" 'BEGIN { printf "%d", (n - s) * 1000 }'; }

next_id=0 started=0 completed=0 failed=0 killed=0
# Each peer runs under a subshell that records its pid and exit code, so that stopping it on purpose
# is not reported by this shell as a job killed.
start_peer() {
  local id=$next_id
  next_id=$((next_id + 1))
  (
    "$peer_bin" -s "127.0.0.1:$port" --stream media --paced --loss "$loss" --seed $((id + 1)) --progress off \
      --timeout 60 --report "$work/peer$id.json" 2>"$work/peer$id.err" &
    echo $! >"$work/peer$id.pid"
    code=0
    wait $! || code=$?
    echo "$code" >"$work/peer$id.code"
  ) 2>/dev/null &
  local pid=$!
  started_at[$pid]=$id
  started=$((started + 1))
  # Some peers are stopped at a random moment of their run instead of finishing it.
  if awk -v r="$RANDOM" -v f="$kill_fraction" 'BEGIN { exit !(r / 32768 < f) }'; then
    kill_at[$pid]=$(($(elapsed_ms) + 1000 + RANDOM % 9000))
    if [ $((RANDOM % 2)) -eq 0 ]; then kill_sig[$pid]=TERM; else kill_sig[$pid]=KILL; fi
  fi
}
# Collects a peer that ended: a killed one counts as churn, any other must have completed.
reap() {
  local pid=$1 id=${started_at[$1]} code
  wait "$pid" || true
  code=$(cat "$work/peer$id.code" 2>/dev/null || echo lost)
  if [ -n "${kill_at[$pid]:-}" ] && [ "${kill_at[$pid]}" = done ]; then
    killed=$((killed + 1))
  elif [ "$code" = 0 ] && grep -q '"complete":true' "$work/peer$id.json" 2>/dev/null; then
    completed=$((completed + 1))
  else
    failed=$((failed + 1))
    echo "soak: peer $id failed (exit $code): $(tail -c 600 "$work/peer$id.err")" >&2
  fi
  unset "started_at[$pid]" "kill_at[$pid]" "kill_sig[$pid]"
  rm -f "$work/peer$id".*
}

start=$(now)
rss_base= rss_max=0 fd_min= fd_max=0 samples=0 next_sample=0
end_ms=$((seconds * 1000))
while :; do
  t=$(elapsed_ms)
  [ "$t" -lt "$end_ms" ] || break
  kill -0 "$server_pid" 2>/dev/null || { echo "soak: the server died" >&2; cat "$work/server.err" >&2; exit 1; }
  for pid in "${!started_at[@]}"; do
    if ! kill -0 "$pid" 2>/dev/null; then
      reap "$pid"
    elif [ -n "${kill_at[$pid]:-}" ] && [ "${kill_at[$pid]}" != done ] && [ "$t" -ge "${kill_at[$pid]}" ]; then
      if signal_peer "$pid" "${kill_sig[$pid]}"; then kill_at[$pid]=done; fi
    fi
  done
  while [ "${#started_at[@]}" -lt "$peers" ]; do start_peer; done
  if [ "$t" -ge "$next_sample" ]; then
    next_sample=$((next_sample + 5000))
    rss=$(rss_kb) fd=$(fds)
    samples=$((samples + 1))
    if [ "$t" -ge $((warmup * 1000)) ]; then
      [ -n "$rss_base" ] || rss_base=$rss
      [ "$rss" -le "$rss_max" ] || rss_max=$rss
      [ -n "$fd_min" ] && [ "$fd" -ge "$fd_min" ] || fd_min=$fd
      [ "$fd" -le "$fd_max" ] || fd_max=$fd
    fi
    echo "soak: $((t / 1000)) s, ${#started_at[@]} peers running, $started started, $completed completed, $killed killed, $failed failed; server RSS $((rss / 1024)) MiB, $fd fds"
  fi
  sleep 0.2
done

# No new peers; those still running get a bounded time to finish, then are stopped.
deadline=$(($(elapsed_ms) + 70000))
while [ "${#started_at[@]}" -gt 0 ] && [ "$(elapsed_ms)" -lt "$deadline" ]; do
  for pid in "${!started_at[@]}"; do kill -0 "$pid" 2>/dev/null || reap "$pid"; done
  sleep 0.2
done
for pid in "${!started_at[@]}"; do
  signal_peer "$pid" KILL || kill -KILL "$pid" 2>/dev/null || true
  kill_at[$pid]=done
  reap "$pid"
done
rss_end=$(rss_kb) fd_end=$(fds)
kill -TERM "$server_pid"
server_code=0
wait "$server_pid" || server_code=$?
server_pid=

[ -n "$rss_base" ] || { echo "soak: no sample after the warm-up" >&2; exit 1; }
growth=$(awk -v b="$rss_base" -v m="$rss_max" 'BEGIN { printf "%.2f", (m - b) * 100 / b }')
ok=true
[ "$failed" -eq 0 ] || ok=false
awk -v g="$growth" -v l="$rss_limit" 'BEGIN { exit !(g < l) }' || ok=false
[ $((fd_max - fd_min)) -le 2 ] || ok=false
[ "$server_code" -eq 0 ] || ok=false
echo "{\"event\":\"soak\",\"ok\":$ok,\"seconds\":$seconds,\"warmup_s\":$warmup,\"peers\":$peers,\"loss\":$loss," \
  "\"started\":$started,\"completed\":$completed,\"killed\":$killed,\"failed\":$failed," \
  "\"rss_base_kb\":$rss_base,\"rss_max_kb\":$rss_max,\"rss_end_kb\":$rss_end,\"rss_growth_pct\":$growth," \
  "\"fds_min\":$fd_min,\"fds_max\":$fd_max,\"fds_end\":$fd_end,\"samples\":$samples,\"server_exit\":$server_code}" |
  tr -d '\n' | sed 's/, "/,"/g'
echo
$ok || { echo "soak: FAILED" >&2; exit 1; }
