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
