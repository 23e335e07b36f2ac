#!/usr/bin/env bash
# The live demo, on loopback only: ffmpeg encodes a live channel in real time (MPEG-TS, H.264 + AAC) into
# ncast-server --live through a pipe; a peer tunes in late, at the live edge (its default), and plays the
# stream into ffmpeg as it arrives. Checked: the peer's output starts on a TS packet with a keyframe,
# ffmpeg decodes it without one error, and the server measured the channel's bitrate (declared too low
# here on purpose: the server says so and paces at the measured one). About 20 s.
#   NCAST_LIVE_SECONDS  length of the channel (default 16)
#   NCAST_LIVE_JOIN     seconds on air before the peer tunes in (default 6)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${NCAST_BUILD_DIR:-$root/build}
seconds=${NCAST_LIVE_SECONDS:-16}
join=${NCAST_LIVE_JOIN:-6}

"$root/tools/build.sh"
server_bin="$build/server/ncast-server"
peer_bin="$build/peer/ncast-peer"

work=$(mktemp -d)
server_pid=
encoder_pid=
cleanup() {
  for pid in $encoder_pid $server_pid; do
    if kill -0 "$pid" 2>/dev/null; then kill -TERM "$pid"; wait "$pid" || true; fi
  done
  rm -rf "$work"
}
trap cleanup EXIT

field() { grep -o "\"$2\":[^,}]*" "$1" | head -1 | cut -d: -f2- | tr -d '"'; }

mkfifo "$work/channel.fifo"
echo "== ncast-server --live channel=<pipe> on 127.0.0.1, --bitrate 1M (the channel is nearer 2 Mbit/s)"
"$server_bin" --live "channel=$work/channel.fifo" --listen 127.0.0.1:0 --bitrate 1M --stats-interval 0 \
  > "$work/server.log" 2> "$work/server.err" &
server_pid=$!
for _ in $(seq 1 100); do grep -q '"event":"listening"' "$work/server.log" 2>/dev/null && break; sleep 0.05; done
grep -q '"event":"listening"' "$work/server.log" || { cat "$work/server.err" >&2; exit 1; }
port=$(field "$work/server.log" port)

echo "== ffmpeg on air: ${seconds} s of 640x360 H.264 (a keyframe a second) + AAC, in real time"
ffmpeg -hide_banner -loglevel error -re -f lavfi -i "testsrc2=size=640x360:rate=25" \
  -f lavfi -i "sine=frequency=440:sample_rate=48000" -t "$seconds" -c:v libx264 -preset ultrafast -g 25 \
  -pix_fmt yuv420p -c:a aac -b:a 96k -f mpegts -y "$work/channel.fifo" 2> "$work/encoder.err" &
encoder_pid=$!
sleep "$join"

echo "== a peer tunes in ${join} s late (--start live, the default) and plays into ffmpeg as it arrives"
"$peer_bin" -s "127.0.0.1:$port" --stream channel -o - --progress off --timeout 60 --report "$work/peer.json" \
  2> "$work/peer.err" | tee "$work/joined.ts" | ffmpeg -hide_banner -v error -i - -f null - 2> "$work/decode.err"
wait "$encoder_pid"
encoder_pid=
for _ in $(seq 1 100); do grep -q '"event":"live_end"' "$work/server.log" && break; sleep 0.05; done

first=$(od -An -tx1 -N1 "$work/joined.ts" | tr -d ' ')
second=$(od -An -tx1 -j188 -N1 "$work/joined.ts" | tr -d ' ')
frame=$(ffprobe -v error -select_streams v -read_intervals '%+#1' -show_entries frame=pict_type -of csv=p=0 \
  "$work/joined.ts" | head -1)
errors=$(grep -c . "$work/decode.err" || true)
aired=$(grep '"event":"live_end"' "$work/server.log" | grep -o '"bytes":[0-9]*' | cut -d: -f2)
got=$(stat -c %s "$work/joined.ts")
echo "   server:  $(grep -o 'stream channel: .*' "$work/server.err" | head -1)"
echo "   server:  $(grep '"event":"live_end"' "$work/server.log")"
echo "   peer:    $got of $aired octets aired (joined late), first octets 0x$first … 0x$second at 188," \
  "first frame $frame, time to first segment $(printf '%.3f' "$(field "$work/peer.json" time_to_first_segment_s)") s," \
  "stalls $(field "$work/peer.json" stalls)"
echo "   ffmpeg:  $errors decoder errors"
kill -TERM "$server_pid"
wait "$server_pid" || true
server_pid=
if [ "$(field "$work/peer.json" complete)" = true ] && [ "$first" = 47 ] && [ "$second" = 47 ] && [ "$frame" = I ] &&
  [ "$errors" -eq 0 ] && [ "$got" -lt "$aired" ]; then
  echo "live demo: a late joiner started at a keyframe and played without a decoder error"
else
  cat "$work/decode.err" "$work/peer.err" >&2
  echo "live demo: the late joiner's stream was not clean" >&2
  exit 1
fi
