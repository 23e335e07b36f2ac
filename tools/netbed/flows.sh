# shellcheck shell=bash
# The traffic of tools/netbed.sh (sourced after bed.sh): ncast servers in $NB-srv, ncast peers and
# iperf3 clients in $NB-peer (data flows server -> peer, through the bottleneck), and what they measure.

# ncast_server PORT LOG [OPTIONS...]: serves $SRC (and any --file given) on $SRV_IP:PORT and waits until
# it listens.
ncast_server() {
  local port=$1 log=$2
  shift 2
  in_srv "$BUILD/server/ncast-server" --file "$SRC" --listen "$SRV_IP:$port" --max-sessions-per-source 0 \
    --stats-interval 0 "$@" >"$log" 2>"$log.err" &
  BED_PIDS+=($!)
  local _
  for _ in $(seq 1 100); do
    grep -q '"event":"listening"' "$log" 2>/dev/null && return 0
    sleep 0.05
  done
  echo "netbed: ncast-server did not start on $SRV_IP:$port:" >&2
  cat "$log.err" >&2
  return 1
}

# ncast_peer NAME HOST:PORT [OPTIONS...]: downloads $SRC's stream in the background; the output goes
# through sha256sum (no copy on disk) into $WORK/NAME.sha, the report into $WORK/NAME.json. Sets PEER_PID.
ncast_peer() {
  local name=$1 server=$2
  shift 2
  (
    in_peer "$BUILD/peer/ncast-peer" -s "$server" --stream "$(basename "$SRC")" -o - --progress off \
      --timeout "$PEER_TIMEOUT" --report "$WORK/$name.json" "$@" 2>"$WORK/$name.err" |
      sha256sum | cut -d' ' -f1 >"$WORK/$name.sha"
  ) &
  PEER_PID=$!
  BED_PIDS+=($!)
}

# peer_result NAME: "ok" when the copy is complete and SHA-256-identical to the source, else why not.
peer_result() {
  local name=$1
  if [ "$(jq -r .complete "$WORK/$name.json" 2>/dev/null)" != true ]; then
    printf 'incomplete (%s)' "$(jq -r '.failure // "no report"' "$WORK/$name.json" 2>/dev/null || echo 'no report')"
  elif [ "$(cat "$WORK/$name.sha")" != "$SRC_SHA" ]; then
    printf 'output differs from the source'
  else
    printf ok
  fi
}

# goodput_mbps NAME: the peer's verified bytes over its completion time, Mbit/s.
goodput_mbps() {
  jq -r 'if .completion_s > 0 then .bytes * 8 / .completion_s / 1e6 else 0 end' "$WORK/$1.json" | xargs printf '%.1f'
}

# iperf_tcp SECONDS JSON [PORT]: an iperf3 TCP flow from $NB-srv to $NB-peer (-R); blocks.
iperf_tcp() {
  local secs=$1 out=$2 port=${3:-5201}
  in_srv iperf3 -s -1 -p "$port" >/dev/null 2>&1 &
  local server=$!
  BED_PIDS+=($server)
  sleep 0.3
  in_peer iperf3 -c "$SRV_IP" -p "$port" -R -t "$secs" -J >"$out" 2>&1 || true
  wait "$server" 2>/dev/null
}

# iperf_mbps JSON: the receiver's rate of an iperf3 run, Mbit/s (0 when it failed).
iperf_mbps() {
  jq -r '(.end.sum_received.bits_per_second // .end.sum.bits_per_second // 0) / 1e6' "$1" 2>/dev/null |
    xargs printf '%.1f' 2>/dev/null || printf 0
}

# measure_link: the bottleneck's rate as one TCP flow alone gets it (before any loss is set): LINK_MBPS.
measure_link() {
  iperf_tcp 3 "$WORK/link.json"
  LINK_MBPS=$(iperf_mbps "$WORK/link.json")
}

# peer_counter NAME: octets that reached the peer namespace in the flow counted as NAME (ncast0: from
# port 7700, ncast1: 7701, tcp0: iperf3's 5201).
peer_counter() {
  in_peer nft -j list counter inet netbed "$1" | jq '.nftables[] | select(.counter) | .counter.bytes'
}
reset_counters() {
  local c
  for c in ncast0 ncast1 tcp0; do in_peer nft reset counter inet netbed "$c" >/dev/null; done
}

# jain X Y...: Jain's fairness index of the rates given.
jain() {
  printf '%s\n' "$@" | awk '{ s += $1; q += $1 * $1; n++ } END { if (q > 0) printf "%.2f", s * s / (n * q); else print 0 }'
}

# forwarder_start OPTIONS...: ncast-netbed-forwarder in the router, from 10.77.2.1:7700 (the peers'
# side) to the ncast server on 7700, impairing as OPTIONS say. Sets FORWARDER_PID.
forwarder_start() {
  # Not through in_rtr: the pid must be the forwarder's own, for its counts on SIGTERM.
  ip netns exec "$NB-rtr" "$BUILD/tools/netbed-forwarder/ncast-netbed-forwarder" --listen 10.77.2.1:7700 --server "$SRV_IP:7700" \
    "$@" >"$WORK/forwarder.json" 2>"$WORK/forwarder.err" &
  FORWARDER_PID=$!
  BED_PIDS+=($!)
  sleep 0.2
}

# forwarder_stop: ends the forwarder; its counts (JSON) are then in $WORK/forwarder.json.
forwarder_stop() {
  kill -TERM "$FORWARDER_PID" 2>/dev/null
  wait "$FORWARDER_PID" 2>/dev/null
}

# server_metric HOST:PORT LINE_START: the value of a /metrics line of an ncast server, read from the
# peer's namespace (e.g. 'ncast_dropped_packets_total{reason="auth"}').
server_metric() {
  in_peer bash -c 'exec 3<>"/dev/tcp/${1%:*}/${1#*:}" && printf "GET /metrics HTTP/1.0\r\n\r\n" >&3 && cat <&3' _ "$1" |
    awk -v k="$2" 'index($0, k " ") == 1 { print $2 }'
}
