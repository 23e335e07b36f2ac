#!/usr/bin/env bash
# ncast on an emulated network (issue 16): network namespaces of its own joined by veth pairs, a tbf
# bottleneck, random loss, blackholes, NAT rebinding and corruption, with ncast and iperf3 flows through
# them. Each case prints one line (PASS or FAIL with its figures and the measured link), every ncast
# copy is checked against the source's SHA-256. docs/netbed.md describes the cases and options.
#
# Usage: tools/netbed.sh [options] [CASE...]     (as root; no case: the whole matrix)
#   --rate R         bottleneck rate, each way (default 100M)
#   --queue BYTES    bottleneck queue, tbf limit (default 250000: 20 ms at 100 Mbit/s)
#   --size MB        the file downloaded (default 32)
#   --window S       how long the fairness cases measure shares (default 30)
#   --overload-peers N   realtime peers of the overload case (default 200)
#   --keep           keep the work folder (logs, reports) and print where it is
#   --build DIR      where ncast-server, ncast-peer, ncast-swarm and udp-forwarder are built (default build, or $NCAST_BUILD_DIR)
#   --short          the cases today's ncast passes, for CI (SHORT_CASES below, and $NETBED_SHORT_EXTRA)
#   --without CASE   leave a case out of those named (repeatable; a sanitized build's ctest leaves out
#                    fairness, a share of the link that its programs' slowness would decide)
#   --list           print the cases and exit
# Exit status: 0 all cases passed, 1 a case failed, 2 bad usage, 77 cannot run here (not root, no
# namespaces, a tool missing: the reason is printed).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=tools/netbed/bed.sh
. "$root/tools/netbed/bed.sh"
# shellcheck source=tools/netbed/flows.sh
. "$root/tools/netbed/flows.sh"
# shellcheck source=tools/netbed/cases.sh
. "$root/tools/netbed/cases.sh"

ALL_CASES=(transferloss2 transferloss30 blackhole rebind randomloss corruption reorder handshakeloss fairness fairness2 overload)
# The short run (--short, the ctest netbed_short, about 2 minutes): the cases today's ncast passes
# (NETBED_SHORT_EXTRA adds more, e.g. "randomloss").
SHORT_CASES=(transferloss2 transferloss30 blackhole rebind fairness)

RATE=100M
QUEUE=250000
SIZE_MB=32
WINDOW=30
OVERLOAD_PEERS=200
KEEP=0
without=()
BUILD=${NCAST_BUILD_DIR:-$root/build}
PEER_TIMEOUT=120
cases=()
while [ $# -gt 0 ]; do
  case "$1" in
    --rate) RATE=$2; shift 2 ;;
    --queue) QUEUE=$2; shift 2 ;;
    --size) SIZE_MB=$2; shift 2 ;;
    --window) WINDOW=$2; shift 2 ;;
    --overload-peers) OVERLOAD_PEERS=$2; shift 2 ;;
    --keep) KEEP=1; shift ;;
    --build) BUILD=$2; shift 2 ;;
    --without) without+=("$2"); shift 2 ;;
    --short) cases+=("${SHORT_CASES[@]}"); read -ra extra <<<"${NETBED_SHORT_EXTRA:-}"; cases+=("${extra[@]}"); shift ;;
    --list) printf '%s\n' "${ALL_CASES[@]}"; exit 0 ;;
    -h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "netbed: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) cases+=("$1"); shift ;;
  esac
done
[ ${#cases[@]} -gt 0 ] || cases=("${ALL_CASES[@]}")
for c in "${cases[@]}" "${without[@]}"; do
  [[ " ${ALL_CASES[*]} " == *" $c "* ]] || { echo "netbed: no case '$c'; the cases: ${ALL_CASES[*]}" >&2; exit 2; }
done
kept=()
for c in "${cases[@]}"; do [[ " ${without[*]} " == *" $c "* ]] || kept+=("$c"); done
[ ${#kept[@]} -gt 0 ] || { echo "netbed: --without left no case to run" >&2; exit 2; }
cases=("${kept[@]}")
[[ $RATE =~ ^[0-9.]+[kKmMgG]?$ ]] || { echo "netbed: --rate '$RATE' is not a rate like 100M" >&2; exit 2; }
[[ $QUEUE =~ ^[0-9]+$ && $QUEUE -ge 3000 ]] || { echo "netbed: --queue '$QUEUE' must be octets, at least 3000" >&2; exit 2; }
[[ $WINDOW =~ ^[1-9][0-9]*$ ]] || { echo "netbed: --window '$WINDOW' must be a whole number of seconds" >&2; exit 2; }
[[ $OVERLOAD_PEERS =~ ^[1-9][0-9]*$ ]] || { echo "netbed: --overload-peers '$OVERLOAD_PEERS' must be a positive whole number" >&2; exit 2; }
[[ $SIZE_MB =~ ^[1-9][0-9]*$ ]] || { echo "netbed: --size '$SIZE_MB' must be a whole number of MB" >&2; exit 2; }

# What this machine must offer; each refusal names the Debian package that brings the tool.
skip() { echo "netbed: SKIPPED: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root (network namespaces, tc, nftables)"
for tool in ip:iproute2 tc:iproute2 nft:nftables iperf3:iperf3 jq:jq sha256sum:coreutils; do
  command -v "${tool%%:*}" >/dev/null || skip "'${tool%%:*}' is missing: install the Debian package ${tool#*:}"
done
for bin in server/ncast-server peer/ncast-peer peer/swarm/ncast-swarm tools/udp-forwarder/udp-forwarder; do
  [ -x "$BUILD/$bin" ] || skip "$BUILD/$bin is not built (tools/build.sh, or --build DIR)"
done
NB=nb-$$
ip netns add "$NB-probe" 2>/dev/null || skip "cannot create a network namespace here"
ip netns del "$NB-probe"

WORK=$(mktemp -d)
BED_ALIVE=0
FAILED=0
RESULTS=()
# shellcheck disable=SC2317  # called by the EXIT trap
finish() {
  [ "$BED_ALIVE" -eq 0 ] || bed_down
  if [ "$KEEP" -eq 1 ]; then echo "netbed: logs and reports kept in $WORK"; else rm -rf "$WORK"; fi
}
trap finish EXIT
trap 'echo "netbed: interrupted" >&2; exit 130' INT TERM

SRC=$WORK/media.bin
head -c "$((SIZE_MB * 1000000))" /dev/urandom >"$SRC"
SRC_SHA=$(sha256sum "$SRC" | cut -d' ' -f1)
[ ${#without[@]} -eq 0 ] || echo "netbed: left out (--without): ${without[*]}"
echo "netbed: ${cases[*]} on ncast $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?'); bottleneck $RATE, queue $QUEUE B, file $SIZE_MB MB"
for c in "${cases[@]}"; do "case_$c"; done

echo
echo "netbed summary ($(date -u +%FT%TZ)):"
printf '  %s\n' "${RESULTS[@]}"
exit "$FAILED"
