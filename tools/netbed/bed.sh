# shellcheck shell=bash
# The emulated network of tools/netbed.sh (sourced): three namespaces of its own joined by veth pairs,
#   $NB-srv (10.77.1.1) --veth-- $NB-rtr (10.77.1.2 | 10.77.2.1) --veth-- $NB-peer (10.77.2.2),
# a tbf bottleneck on the router's two egress interfaces, and impairments as nftables rules. Nothing
# here touches an interface or namespace it did not create: every name starts with $NB, unique per run.

SRV_IP=10.77.1.1
RTR_SRV_IP=10.77.1.2
PEER_IP=10.77.2.2
BED_PIDS=()   # background processes of this bed (servers, peers, impairment loops)

in_srv() { ip netns exec "$NB-srv" "$@"; }
in_rtr() { ip netns exec "$NB-rtr" "$@"; }
in_peer() { ip netns exec "$NB-peer" "$@"; }

# Bits per second from 100M, 768k, 1.5G or a plain number.
to_bps() {
  local v=$1
  case "$v" in
    *[kK]) awk -v x="${v%?}" 'BEGIN { printf "%.0f", x * 1e3 }' ;;
    *[mM]) awk -v x="${v%?}" 'BEGIN { printf "%.0f", x * 1e6 }' ;;
    *[gG]) awk -v x="${v%?}" 'BEGIN { printf "%.0f", x * 1e9 }' ;;
    *) printf '%s' "$v" ;;
  esac
}

# bed_up RATE QUEUE_BYTES: the namespaces, links and a bottleneck of RATE bit/s each way with a
# drop-tail queue of QUEUE_BYTES (tbf limit).
bed_up() {
  local rate=$1 queue=$2 n
  BED_PIDS=()
  for n in srv rtr peer; do ip netns add "$NB-$n"; done
  BED_ALIVE=1
  ip link add s0 netns "$NB-srv" type veth peer name r0 netns "$NB-rtr"
  ip link add p0 netns "$NB-peer" type veth peer name r1 netns "$NB-rtr"
  ip -n "$NB-srv" addr add "$SRV_IP/24" dev s0
  ip -n "$NB-rtr" addr add "$RTR_SRV_IP/24" dev r0
  ip -n "$NB-rtr" addr add 10.77.2.1/24 dev r1
  ip -n "$NB-peer" addr add "$PEER_IP/24" dev p0
  for n in srv rtr peer; do ip -n "$NB-$n" link set lo up; done
  # One datagram per packet on the wire: the server's UDP GSO sends (and TCP's TSO) would otherwise
  # cross the veths as one packet of up to 64 KB, and the loss rules would drop runs of datagrams.
  local dev
  for dev in srv:s0 rtr:r0 rtr:r1 peer:p0; do ip -n "$NB-${dev%:*}" link set "${dev#*:}" gso_max_segs 1; done
  ip -n "$NB-srv" link set s0 up
  ip -n "$NB-rtr" link set r0 up
  ip -n "$NB-rtr" link set r1 up
  ip -n "$NB-peer" link set p0 up
  ip -n "$NB-srv" route add default via "$RTR_SRV_IP"
  ip -n "$NB-peer" route add default via 10.77.2.1
  in_rtr sysctl -qw net.ipv4.ip_forward=1
  # tbf needs a bucket of at least one timer tick of traffic (HZ may be 100) and one full-size frame.
  local burst=$(($(to_bps "$rate") / 8 / 100))
  [ "$burst" -ge 16000 ] || burst=16000
  tc -n "$NB-rtr" qdisc add dev r1 root tbf rate "$(to_bps "$rate")bit" burst "$burst" limit "$queue"
  tc -n "$NB-rtr" qdisc add dev r0 root tbf rate "$(to_bps "$rate")bit" burst "$burst" limit "$queue"
  # Counters of what reaches the peer namespace per flow (after the bottleneck and the loss), and
  # the chains the impairments fill.
  in_peer nft -f - <<'EOF'
table inet netbed {
  counter ncast0 {}
  counter ncast1 {}
  counter tcp0 {}
  counter seen {}
  counter lost {}
  chain loss {
    type filter hook prerouting priority -300; policy accept;
  }
  chain count {
    type filter hook input priority 0; policy accept;
    udp sport 7700 counter name ncast0
    udp sport 7701 counter name ncast1
    tcp sport 5201 counter name tcp0
  }
}
EOF
  in_rtr nft -f - <<'EOF'
table inet netbed {
  counter seen {}
  counter lost {}
  chain loss {
    type filter hook prerouting priority -300; policy accept;
  }
  chain blackhole {
    type filter hook forward priority 0; policy accept;
  }
}
EOF
}

# bed_loss PERCENT: drop this share of datagrams at random each way, after the bottleneck (in the
# peer's namespace for what the server sends, at the router's entrance for what the peer sends),
# counting what passes and what is dropped (bed_loss_text).
bed_loss() {
  local permille
  permille=$(awk -v p="$1" 'BEGIN { printf "%.0f", p * 10 }')
  in_peer nft flush chain inet netbed loss
  in_rtr nft flush chain inet netbed loss
  in_peer nft add rule inet netbed loss ip saddr 10.77.1.0/24 counter name seen
  in_rtr nft add rule inet netbed loss iif r1 counter name seen
  if [ "$permille" -gt 0 ]; then
    in_peer nft add rule inet netbed loss ip saddr 10.77.1.0/24 numgen random mod 1000 '<' "$permille" counter name lost drop
    in_rtr nft add rule inet netbed loss iif r1 numgen random mod 1000 '<' "$permille" counter name lost drop
  fi
  in_peer nft reset counters table inet netbed >/dev/null
  in_rtr nft reset counters table inet netbed >/dev/null
}

# bed_loss_text: the loss the case's own packets met since bed_loss, each way.
bed_loss_text() {
  local ns way text=()
  for ns in peer rtr; do
    [ "$ns" = peer ] && way="to the peer" || way="from it"
    text+=("$(ip netns exec "$NB-$ns" nft -j list counters table inet netbed |
      jq -r --arg way "$way" '[.nftables[] | select(.counter) | {(.counter.name): .counter.packets}] | add |
        if .seen > 0 then "\(.lost * 1000 / .seen | round / 10) % of \(.seen) \($way)" else "nothing \($way)" end')")
  done
  printf 'loss %s, %s' "${text[0]}" "${text[1]}"
}

# bed_blackhole OFF_S ON_S DELAY_S: after DELAY_S seconds, the router forwards nothing for OFF_S
# seconds, then all for ON_S seconds, repeated until the bed goes down.
bed_blackhole() {
  local off=$1 on=$2 delay=$3
  (
    sleep "$delay"
    while :; do
      in_rtr nft add rule inet netbed blackhole drop
      sleep "$off"
      in_rtr nft flush chain inet netbed blackhole
      sleep "$on"
    done
  ) &
  BED_PIDS+=($!)
}

# bed_rebind EVERY_S: the router NATs the peer's UDP to 10.77.1.2 and a new source port every EVERY_S
# seconds, as a NAT whose mapping expired. Conntrack keeps an existing flow's mapping when the rule
# changes, so each period's packets go into a conntrack zone of their own (a fresh mapping, no
# conntrack tool needed); replies to an earlier period's port are dropped, as a NAT would.
bed_rebind() {
  local every=$1
  (
    local k=1
    while :; do
      in_rtr nft -f - <<EOF
table ip netbed_nat
delete table ip netbed_nat
table ip netbed_nat {
  chain raw {
    type filter hook prerouting priority -300; policy accept;
    iif r1 ip saddr $PEER_IP meta l4proto udp ct zone set $k
    iif r0 udp dport $((40000 + k)) ct zone set $k
  }
  chain nat {
    type nat hook postrouting priority 100; policy accept;
    oif r0 ip saddr $PEER_IP meta l4proto udp snat to $RTR_SRV_IP:$((40000 + k))
  }
  chain stale {
    type filter hook input priority 0; policy accept;
    iif r0 udp dport 40000-49999 drop
  }
}
EOF
      sleep "$every"
      k=$((k % 9999 + 1))
    done
  ) &
  BED_PIDS+=($!)
}

# bed_down: stops what the bed started and removes its namespaces (with their veths, qdiscs and
# tables). Safe to call twice and after a partial bed_up.
bed_down() {
  local pid n
  # The impairment loops first (and the sleep or nft each may be in), then what runs in the namespaces.
  for pid in "${BED_PIDS[@]}"; do
    pkill -TERM -P "$pid" 2>/dev/null
    kill "$pid" 2>/dev/null
  done
  for n in srv rtr peer; do
    ip netns pids "$NB-$n" 2>/dev/null | xargs -r kill 2>/dev/null
  done
  for pid in "${BED_PIDS[@]}"; do wait "$pid" 2>/dev/null; done
  BED_PIDS=()
  for n in srv rtr peer; do
    if ip netns list | grep -qw "^$NB-$n"; then
      # A process that ignored TERM would keep the namespace alive after its name is gone.
      sleep 0.2
      ip netns pids "$NB-$n" 2>/dev/null | xargs -r kill -KILL 2>/dev/null
      ip netns del "$NB-$n"
    fi
  done
  BED_ALIVE=0
}
