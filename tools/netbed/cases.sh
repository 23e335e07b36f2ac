# shellcheck shell=bash
# The cases of tools/netbed.sh (sourced after bed.sh and flows.sh). Each case_NAME builds its bed with
# with_bed, runs its flows, and ends with one result line through verdict.

# with_bed RATE QUEUE LOSS_PCT: a fresh bed, its link rate measured alone, then the loss set and measured.
with_bed() {
  bed_up "$1" "$2"
  measure_link
  bed_loss "$3"
  measure_loss
  BED_LINE="link ${LINK_MBPS} Mbit/s (tbf $1, queue $2 B), loss ${LOSS_PCT} % (set $3 %)"
}

# verdict CASE PASS|FAIL TEXT: the case's one line, kept for the summary.
verdict() {
  local line
  line=$(printf '%-16s %-4s %s | %s' "$1" "$2" "$3" "$BED_LINE")
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

# download_case CASE LOSS_PCT [PEER_OPTIONS...]: one download peer through the bed as it is set up
# (impairments started by the caller), its copy checked; the case's verdict line.
download_case() {
  local name=$1
  shift
  ncast_peer "$name" "$SRV_IP:7700" "$@"
  wait "$PEER_PID"
  local result status=FAIL
  result=$(peer_result "$name")
  [ "$result" = ok ] && status=PASS
  verdict "$name" "$status" "copy $result; $(jq -r '"\(.completion_s * 10 | round / 10) s, overhead \(.overhead * 1000 | round / 1000), rejoins \(.rejoins), stalls \(.stalls), bad packets \(.bad_packets)"' "$WORK/$name.json" 2>/dev/null); goodput $(goodput_mbps "$name" 2>/dev/null) Mbit/s"
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
# the transfer (about 3 s without them) spans several outages.
case_blackhole() {
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
