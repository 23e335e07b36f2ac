#!/usr/bin/env bash
# The streaming demo, on loopback only: makes a real test video with ffmpeg, serves it with ncast-server,
# has a group of peers fetch it with simulated loss (one of them relaying recoded symbols to one more
# peer, one piping the stream into ffprobe as a player would), checks that every copy is byte-identical
# to the source (SHA-256) and that ffprobe reads it, prints a summary and stops everything cleanly.
#   NCAST_DEMO_PEERS   peers fetching from the server (default 8)
#   NCAST_DEMO_LOSS    fraction of datagrams each peer drops on arrival (default 0.2)
#   NCAST_DEMO_SECONDS length of the test video (default 20)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${NCAST_BUILD_DIR:-$root/build}
peers=${NCAST_DEMO_PEERS:-8}
loss=${NCAST_DEMO_LOSS:-0.2}
seconds=${NCAST_DEMO_SECONDS:-20}

"$root/tools/build.sh"
server_bin="$build/server/ncast-server"
peer_bin="$build/peer/ncast-peer"

work=$(mktemp -d)
server_pid=
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then kill -TERM "$server_pid"; wait "$server_pid" || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# The value of a JSON key in a one-line report (numbers, booleans and strings without quotes inside).
field() { grep -o "\"$2\":[^,}]*" "$1" | head -1 | cut -d: -f2- | tr -d '"'; }
num() { if [[ "$1" =~ ^[0-9.]+$ ]]; then printf '%.3f' "$1"; else printf '%s' "$1"; fi; }

echo "== A test video: ${seconds} s of 720p H.264 + AAC in MPEG-TS (ffmpeg testsrc2)"
ffmpeg -hide_banner -loglevel error -f lavfi -i "testsrc2=size=1280x720:rate=30" \
  -f lavfi -i "sine=frequency=440:sample_rate=48000" -t "$seconds" \
  -c:v libx264 -preset veryfast -b:v 2M -g 60 -c:a aac -b:a 128k -f mpegts "$work/demo.ts"
bitrate=$(ffprobe -v error -show_entries format=bit_rate -of default=nw=1:nk=1 "$work/demo.ts")
source_sha=$(sha256sum "$work/demo.ts" | cut -d' ' -f1)
echo "   $(stat -c %s "$work/demo.ts") bytes, ${bitrate} bit/s, sha256 ${source_sha:0:16}…"

echo "== ncast-server on 127.0.0.1 (port chosen by the kernel)"
"$server_bin" --file "$work/demo.ts" --listen 127.0.0.1:0 --metrics 127.0.0.1:0 --bitrate "$bitrate" \
  --stats-interval 1 > "$work/server.log" 2> "$work/server.err" &
server_pid=$!
for _ in $(seq 1 100); do grep -q '"event":"listening"' "$work/server.log" 2>/dev/null && break; sleep 0.05; done
grep -q '"event":"listening"' "$work/server.log" || { cat "$work/server.err" >&2; exit 1; }
port=$(field "$work/server.log" port)
metrics=$(field "$work/server.log" metrics)
origin_key=$(field "$work/server.log" identity)
echo "   $(head -1 "$work/server.log")"

echo "== ${peers} peers with ${loss} simulated loss; peer 1 also relays recoded symbols to one more peer"
pids=()
for i in $(seq 1 "$peers"); do
  relay=()
  [ "$i" -eq 1 ] && relay=(--relay 127.0.0.1:0 --relay-linger 30)
  "$peer_bin" -s "127.0.0.1:$port" --stream demo.ts -o "$work/peer$i.ts" --loss "$loss" --seed "$i" \
    --max-rate 40M --progress off --timeout 120 --report "$work/peer$i.json" "${relay[@]}" 2> "$work/peer$i.err" &
  pids+=($!)
done
for _ in $(seq 1 200); do grep -q '"event":"relay"' "$work/peer1.err" 2>/dev/null && break; sleep 0.05; done
relay_port=$(grep '"event":"relay"' "$work/peer1.err" | head -1 | grep -o '"port":[0-9]*' | cut -d: -f2)
"$peer_bin" -s "127.0.0.1:$relay_port" --origin-key "$origin_key" --stream demo.ts -o "$work/relayed.ts" \
  --loss "$loss" --seed 99 --max-rate 40M --progress off --timeout 120 --report "$work/relayed.json" 2> "$work/relayed.err" &
pids+=($!)
# A player's view: the stream on standard output, read by ffmpeg as it arrives (what ffplay would get),
# with a copy kept to check it.
"$peer_bin" -s "127.0.0.1:$port" --stream demo.ts -o - --loss "$loss" --seed 100 --max-rate 40M \
  --progress off --timeout 120 --report "$work/piped.json" 2> "$work/piped.err" |
  tee "$work/piped.ts" | ffmpeg -v error -i - -c copy -f null - &
pids+=($!)
failed=0
for pid in "${pids[@]}"; do wait "$pid" || failed=1; done

echo
printf '%-9s %-8s %-10s %-9s %-9s %-7s %-10s %s\n' peer complete time_s first_s overhead stalls sha256 ffprobe
ok=0
total=0
for name in $(seq -f 'peer%g' 1 "$peers") relayed piped; do
  total=$((total + 1))
  report="$work/$name.json"
  [ "$(sha256sum "$work/$name.ts" | cut -d' ' -f1)" = "$source_sha" ] && sha=identical || sha=DIFFERENT
  probe=$(ffprobe -v error -show_entries format=format_name,duration -of default=nw=1 "$work/$name.ts" | tr '\n' ' ')
  complete=$(field "$report" complete)
  printf '%-9s %-8s %-10s %-9s %-9s %-7s %-10s %s\n' "$name" "$complete" "$(num "$(field "$report" completion_s)")" \
    "$(num "$(field "$report" time_to_first_segment_s)")" "$(num "$(field "$report" overhead)")" \
    "$(field "$report" stalls)" "$sha" "$probe"
  if [ "$complete" = true ] && [ "$sha" = identical ] && [[ "$probe" == *format_name=mpegts* ]]; then ok=$((ok + 1)); fi
done
echo "   (overhead: coded symbols received per source symbol needed; time_s: until the whole stream was verified)"

echo
echo "== The server's view (http://$metrics/metrics)"
exec 3<>"/dev/tcp/${metrics%:*}/${metrics#*:}"
printf 'GET /metrics HTTP/1.0\r\n\r\n' >&3
grep -E '^ncast_(sessions_created_total|segments_completed_total|engine_symbols_total|engine_seconds_total|gso_sends_total|sent_packets_total\{type="coded"\}|sent_systematic_total) ' <&3 | sed 's/^/   /'
exec 3<&-

kill -TERM "$server_pid"
wait "$server_pid" || true
server_pid=
echo "   $(tail -1 "$work/server.log")"
echo
if [ "$ok" -eq "$total" ] && [ "$failed" -eq 0 ]; then
  echo "stream demo: all ${total} copies complete, byte-identical to the source and readable by ffprobe"
else
  echo "stream demo: only ${ok} of ${total} copies were complete and correct" >&2
  exit 1
fi
