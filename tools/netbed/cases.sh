# shellcheck shell=bash
# The cases of tools/netbed.sh (sourced after bed.sh and flows.sh). Each case_NAME builds its bed with
# with_bed, runs its flows, and ends with one result line through verdict.

# with_bed RATE QUEUE LOSS_PCT: a fresh bed, its link rate measured alone, then the loss set.
with_bed() {
  bed_up "$1" "$2"
  measure_link
  bed_loss "$3"
  BED_SET="tbf $1, queue $2 B, loss set $3 %"
}

# verdict CASE PASS|FAIL TEXT: the case's one line, kept for the summary.
verdict() {
  local line
  line=$(printf '%-16s %-4s %s | link %s Mbit/s (TCP goodput; %s on the wire), %s (%s)' "$1" "$2" "$3" \
    "$LINK_MBPS" "$LINK_WIRE_MBPS" "$(bed_loss_text)" "$BED_SET")
  echo "$line"
  RESULTS+=("$line")
  [ "$2" = PASS ] || FAILED=1
}

# One download peer at 10 % random loss through 100 Mbit/s: ncast's goodput against 0.85 x 90 Mbit/s,
# and an iperf3 TCP flow alone on the same bed as the anchor.
case_randomloss() {
  with_bed "$RATE" "$QUEUE" 10
  ncast_server 7700 "$WORK/server.log"
  ncast_peer randomloss "$SRV_IP:7700"
  wait "$PEER_PID"
  iperf_tcp 10 "$WORK/randomloss-tcp.json"
  local result goodput tcp target status=FAIL
  result=$(peer_result randomloss)
  goodput=$(goodput_mbps randomloss)
  tcp=$(iperf_mbps "$WORK/randomloss-tcp.json")
  target=$(awk -v l="$LINK_MBPS" 'BEGIN { printf "%.1f", 0.85 * 0.9 * l }')
  [ "$result" = ok ] && awk -v g="$goodput" -v t="$target" 'BEGIN { exit !(g >= t) }' && status=PASS
  verdict randomloss "$status" "copy $result; ncast goodput $goodput Mbit/s (target >= $target = 0.85 x 0.9 x link); iperf3 TCP alone $tcp Mbit/s"
  bed_down
}

# download_case CASE [PEER_OPTIONS...]: one download peer through the bed as it is set up (impairments
# started by the caller), its copy checked (and with NO_REJOIN=1 set by the caller, that its session
# survived: no new session joined); the case's verdict line.
download_case() {
  local name=$1
  shift
  ncast_peer "$name" "$SRV_IP:7700" "$@"
  wait "$PEER_PID"
  local result status=FAIL
  result=$(peer_result "$name")
  [ "$result" = ok ] && { [ "${NO_REJOIN:-0}" = 0 ] || [ "$(jq -r .rejoins "$WORK/$name.json")" = 0 ]; } && status=PASS
  verdict "$name" "$status" "copy $result; $(jq -r '"\(.completion_s * 10 | round / 10) s, overhead \(.overhead * 1000 | round / 1000), rejoins \(.rejoins), resumes \(.resumes // 0), stalls \(.stalls), bad packets \(.bad_packets)"' "$WORK/$name.json" 2>/dev/null); goodput $(goodput_mbps "$name" 2>/dev/null) Mbit/s"
}

# Random loss each way during the whole transfer.
case_transferloss2() {
  with_bed "$RATE" "$QUEUE" 2
  ncast_server 7700 "$WORK/server.log"
  download_case transferloss2
  bed_down
}
case_transferloss30() {
  with_bed "$RATE" "$QUEUE" 30
  ncast_server 7700 "$WORK/server.log"
  download_case transferloss30
  bed_down
}

# The router forwards nothing for 5 s, then everything for 2 s, repeated, from 1 s into the transfer;
# the transfer (about 3 s without them) spans several outages. The session must survive them: the
# server probes through each outage and the peer resumes where it was, without joining again.
case_blackhole() {
  local NO_REJOIN=1
  with_bed "$RATE" "$QUEUE" 0
  ncast_server 7700 "$WORK/server.log"
  bed_blackhole 5 2 1
  download_case blackhole
  bed_down
}

# The peer's UDP leaves the router from a new source port every 5 s (NAT rebinding); the peer capped at
# 20 Mbit/s so that the transfer spans several rebindings.
case_rebind() {
  with_bed "$RATE" "$QUEUE" 0
  ncast_server 7700 "$WORK/server.log"
  bed_rebind 5
  download_case rebind --max-rate 20M
  bed_down
}

# 2 % of the datagrams each way get one bit flipped (in the forwarder): the peer's AEAD must drop each
# one it receives (counted as bad packets), and the copy must still be exact.
case_corruption() {
  with_bed "$RATE" "$QUEUE" 0
  ncast_server 7700 "$WORK/server.log" --metrics "$SRV_IP:9100"
  forwarder_start --corrupt 0.02 --seed "$$"
  ncast_peer corruption 10.77.2.1:7700
  wait "$PEER_PID"
  local server_auth
  server_auth=$(server_metric "$SRV_IP:9100" 'ncast_dropped_packets_total{reason="auth"}')
  forwarder_stop
  local result bad flipped status=FAIL
  result=$(peer_result corruption)
  bad=$(jq -r .bad_packets "$WORK/corruption.json" 2>/dev/null)
  flipped=$(jq -r .corrupted_down "$WORK/forwarder.json" 2>/dev/null)
  # Every flipped datagram that reached the peer is dropped; a few may have been lost in the queue.
  [ "$result" = ok ] && [ "${bad:-0}" -gt 0 ] && [ "${bad:-0}" -le "${flipped:-0}" ] && status=PASS
  verdict corruption "$status" "copy $result; to the peer: $flipped of $(jq -r .down "$WORK/forwarder.json" 2>/dev/null) datagrams flipped, $bad dropped as bad by the peer; to the server: $(jq -r .corrupted_up "$WORK/forwarder.json" 2>/dev/null) flipped, ${server_auth:-?} dropped by its AEAD check; goodput $(goodput_mbps corruption) Mbit/s"
  bed_down
}

# big_source: a file that no flow can finish within the fairness window ($WINDOW s at the whole link):
# its head random, the rest a hole (no disk); sets SRC and SRC_SHA for the caller's scope.
big_source() {
  SRC=$WORK/big/media.bin
  if [ ! -f "$SRC" ]; then
    mkdir -p "$WORK/big"
    head -c 8000000 "$WORK/media.bin" >"$SRC"
    truncate -s "$(awk -v l="$LINK_MBPS" -v w="$WINDOW" 'BEGIN { printf "%.0f", l * 1e6 / 8 * w }')" "$SRC"
  fi
  SRC_SHA=$(sha256sum "$SRC" | cut -d' ' -f1)
}

# share NAME OCTETS SECONDS: a flow's rate on the wire (IP packets that reached the peer) and its share
# of the link measured the same way: sets SHARE_MBPS, SHARE_PCT and SHARE_TEXT ("NAME X Mbit/s (Y %)").
share() {
  SHARE_MBPS=$(awk -v b="$2" -v s="$3" 'BEGIN { printf "%.1f", b * 8 / s / 1e6 }')
  SHARE_PCT=$(awk -v m="$SHARE_MBPS" -v l="$LINK_WIRE_MBPS" 'BEGIN { printf "%.0f", 100 * m / l }')
  SHARE_TEXT="$1 $SHARE_MBPS Mbit/s ($SHARE_PCT %)"
}
within() { awk -v x="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(x >= lo && x <= hi) }'; }

# One ncast download and one iperf3 TCP flow through the bottleneck for $WINDOW s: each flow's share of
# the link (octets that reached the peer), Jain's index >= 0.9 and each 35-65 % to pass. The download
# then runs to its end alone, for the copy check.
case_fairness() {
  with_bed "$RATE" "$QUEUE" 0
  local SRC SRC_SHA
  big_source
  ncast_server 7700 "$WORK/server.log" --host-memory-mb 64 --metrics "$SRV_IP:9100"
  reset_counters
  local t0 t1
  t0=$(date +%s.%N)
  ncast_peer fairness "$SRV_IP:7700"
  iperf_tcp "$WINDOW" "$WORK/fairness-tcp.json"
  t1=$(date +%s.%N)
  local secs ncast tcp ncast_pct tcp_pct ncast_mbps tcp_mbps index status=FAIL
  secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
  share ncast "$(peer_counter ncast0)" "$secs"
  ncast=$SHARE_TEXT ncast_pct=$SHARE_PCT ncast_mbps=$SHARE_MBPS
  share "iperf3 TCP" "$(peer_counter tcp0)" "$secs"
  tcp=$SHARE_TEXT tcp_pct=$SHARE_PCT tcp_mbps=$SHARE_MBPS
  index=$(jain "$ncast_mbps" "$tcp_mbps")
  local entries
  entries=$(server_metric "$SRV_IP:9100" ncast_window_flow_entries_total)
  wait "$PEER_PID"
  local result
  result=$(peer_result fairness)
  [ "$result" = ok ] && within "$index" 0.9 1 && within "$ncast_pct" 35 65 && within "$tcp_pct" 35 65 && status=PASS
  verdict fairness "$status" "over $(printf '%.0f' "$secs") s: $ncast, $tcp; Jain's index $index (pass: >= 0.9, each 35-65 %); the download became a window flow $entries times; copy $result"
  bed_down
}

# Two ncast downloads (two servers, ports 7700 and 7701) through the bottleneck for $WINDOW s: each
# one's share of the link, 40-60 % each to pass; then both run to their end, for the copy check.
case_fairness2() {
  with_bed "$RATE" "$QUEUE" 0
  local SRC SRC_SHA
  big_source
  ncast_server 7700 "$WORK/server.log" --host-memory-mb 64
  ncast_server 7701 "$WORK/server2.log" --host-memory-mb 64
  reset_counters
  local t0 pids=()
  t0=$(date +%s.%N)
  ncast_peer fairness2-a "$SRV_IP:7700"
  pids+=("$PEER_PID")
  ncast_peer fairness2-b "$SRV_IP:7701"
  pids+=("$PEER_PID")
  sleep "$WINDOW"
  local secs a b a_pct b_pct index status=FAIL
  secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
  share "ncast A" "$(peer_counter ncast0)" "$secs"
  a=$SHARE_TEXT a_pct=$SHARE_PCT
  index=$SHARE_MBPS
  share "ncast B" "$(peer_counter ncast1)" "$secs"
  b=$SHARE_TEXT b_pct=$SHARE_PCT
  index=$(jain "$index" "$SHARE_MBPS")
  wait "${pids[@]}"
  local ra rb
  ra=$(peer_result fairness2-a)
  rb=$(peer_result fairness2-b)
  [ "$ra" = ok ] && [ "$rb" = ok ] && within "$a_pct" 40 60 && within "$b_pct" 40 60 && status=PASS
  verdict fairness2 "$status" "over $(printf '%.0f' "$secs") s: $a, $b; Jain's index $index (pass: each 40-60 %); copies $ra, $rb"
  bed_down
}

# 50 peers (processes) join at once at 30 % loss each way and fetch a 1 MB file: mostly handshakes
# (HELLO, RETRY, MANIFEST) under loss. Every copy must be exact.
case_handshakeloss() {
  with_bed "$RATE" "$QUEUE" 30
  local SRC=$WORK/small/media.bin SRC_SHA
  mkdir -p "$WORK/small"
  head -c 1000000 "$WORK/media.bin" >"$SRC"
  SRC_SHA=$(sha256sum "$SRC" | cut -d' ' -f1)
  ncast_server 7700 "$WORK/server.log" --metrics "$SRV_IP:9100"
  local i pids=() ok=0 why=()
  for i in $(seq 1 50); do
    ncast_peer "handshake$i" "$SRV_IP:7700"
    pids+=("$PEER_PID")
  done
  wait "${pids[@]}"
  for i in $(seq 1 50); do
    local r
    r=$(peer_result "handshake$i")
    if [ "$r" = ok ]; then ok=$((ok + 1)); else why+=("peer $i: $r"); fi
  done
  local times status=FAIL
  times=$(cat "$WORK"/handshake*.json | jq -s '[.[] | .completion_s // empty] | sort | "median \(.[length / 2 | floor] * 10 | round / 10) s, max \(.[-1] * 10 | round / 10) s"' -r)
  [ "$ok" -eq 50 ] && status=PASS
  verdict handshakeloss "$status" "$ok of 50 copies exact${why:+ (${why[0]})}; $times; rejoins $(cat "$WORK"/handshake*.json | jq -s 'map(.rejoins) | add'); server: $(server_metric "$SRV_IP:9100" ncast_sessions_created_total) sessions, $(server_metric "$SRV_IP:9100" 'ncast_sent_packets_total{type="retry"}') RETRY"
  bed_down
}

# $OVERLOAD_PEERS realtime peers of a 768 kbit/s stream (ncast-swarm, every segment verified by its
# SHA-256) behind a 50 Mbit/s bottleneck that carries a third of what they ask, and an iperf3 TCP flow
# started beside them. To pass: the TCP flow gets >= 20 % of the link, and every peer either plays
# without a late segment or is ended by the server with a "path too slow" BYE.
case_overload() {
  with_bed 50M "$QUEUE" 0
  local SRC=$WORK/stream/media.bin SRC_SHA
  mkdir -p "$WORK/stream"
  head -c 1920000 "$WORK/media.bin" >"$SRC" # 20 s at 768 kbit/s
  ncast_server 7700 "$WORK/server.log" --bitrate 768k
  in_peer "$BUILD/peer/swarm/ncast-swarm" -s "$SRV_IP:7700" --stream media.bin -n "$OVERLOAD_PEERS" --realtime 1 \
    --ramp 2 --threads 1 --timeout 90 --progress off --json >"$WORK/overload.json" 2>"$WORK/overload.err" &
  local swarm=$!
  BED_PIDS+=($swarm)
  sleep 4
  reset_counters
  local t0 secs
  t0=$(date +%s.%N)
  iperf_tcp 15 "$WORK/overload-tcp.json"
  secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
  share "ncast" "$(peer_counter ncast0)" "$secs"
  local ncast=$SHARE_TEXT
  share "iperf3 TCP" "$(peer_counter tcp0)" "$secs"
  local tcp=$SHARE_TEXT tcp_pct=$SHARE_PCT peers_text status=FAIL
  wait "$swarm"
  peers_text=$(jq -r '[.per_peer[]] as $p |
    ($p | map(select(.status == "complete" and .late_segments == 0)) | length) as $good |
    ($p | map(select((.failure // "") | test("path too slow"))) | length) as $bye |
    "\($good) of \($p | length) peers played without a late segment, \($bye) got the path-too-slow BYE; late segments \(.late_segments) of \(.segments), peers failed \(.failed)" +
    ([$p[] | .failure // empty | capture("measured (?<m>[0-9]+) of") | .m | tonumber] |
      if length > 0 then " (the BYEs measured \(min)-\(max) kbit/s)" else "" end) +
    ([$p[] | .failure // empty | select(test("path too slow") | not)] |
      if length > 0 then "; other failures: \(.[0:3] | join("; "))" else "" end)' \
    "$WORK/overload.json" 2>/dev/null || echo "no swarm report ($(tail -1 "$WORK/overload.err"))")
  local all
  all=$(jq -r '(.per_peer | length) as $n | [.per_peer[] | select((.status == "complete" and .late_segments == 0) or ((.failure // "") | test("path too slow")))] | length == $n' "$WORK/overload.json" 2>/dev/null)
  within "$tcp_pct" 20 100 && [ "$all" = true ] && status=PASS
  verdict overload "$status" "$OVERLOAD_PEERS realtime 768 kbit/s peers: $peers_text; beside them $tcp (pass: >= 20 %), $ncast reached the peers"
  bed_down
}

# One download through the forwarder with 10 ms of delay each way, varied by up to ±5 ms per datagram:
# an RTT of about 20 ms and datagrams reordered within a few milliseconds. The copy must be exact.
case_reorder() {
  with_bed "$RATE" "$QUEUE" 0
  ncast_server 7700 "$WORK/server.log"
  forwarder_start --delay-ms 10 --jitter-ms 5 --seed "$$"
  ncast_peer reorder 10.77.2.1:7700
  wait "$PEER_PID"
  forwarder_stop
  local result status=FAIL
  result=$(peer_result reorder)
  [ "$result" = ok ] && status=PASS
  verdict reorder "$status" "copy $result; $(jq -r '"\(.completion_s * 10 | round / 10) s, overhead \(.overhead * 1000 | round / 1000), rejoins \(.rejoins), stalls \(.stalls)"' "$WORK/reorder.json" 2>/dev/null); goodput $(goodput_mbps reorder) Mbit/s; forwarded $(jq -r '"\(.down) to the peer, \(.up) to the server"' "$WORK/forwarder.json" 2>/dev/null)"
  bed_down
}
