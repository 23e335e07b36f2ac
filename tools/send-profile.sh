#!/usr/bin/env bash
# Where ncast-server's CPU goes per coded datagram (issue 17's profile): one server thread on CPU 0
# serving PEERS realtime 768 kbit/s peers (n=128, L=1024) of a 30 s stream from ncast-swarm on CPUs 2.. (1 on a 2-core machine),
# perf sampling the server for 8 s in the middle; prints CPU-µs per datagram sent and perf's split by
# library and by function, and writes the perf tables to $OUT (default: a scratch folder, removed).
#
#   tools/send-profile.sh DIR [PEERS]    DIR holds ncast-server and ncast-swarm (a build's are in
#                                        server/ and peer/swarm/: copy them together), and perf if it is
#                                        not on PATH, with any libraries they lack in DIR or DIR/lib.
# NCAST_SERVER_ARGS and NCAST_SWARM_ARGS are added to the programs' arguments; NCAST_PROFILE=swarm
# samples the swarm instead of the server (the CPU-µs line stays the server's).
# Needs root (perf on another process, socket buffer sysctls) and PEERS + 100 file descriptors.
set -u
c=$(cd "${1:?usage: tools/send-profile.sh DIR [PEERS]}" && pwd); peers=${2:-2000}
target=${NCAST_PROFILE:-server}
[[ $target == server || $target == swarm ]] || { echo "send-profile: NCAST_PROFILE must be server or swarm" >&2; exit 2; }
export LD_LIBRARY_PATH=$c:$c/lib
perf=$c/perf; [ -x "$perf" ] || perf=$(command -v perf) || { echo "send-profile: perf not found (Debian package linux-perf)" >&2; exit 2; }
for p in ncast-server ncast-swarm; do [ -x "$c/$p" ] || { echo "send-profile: $c lacks $p" >&2; exit 2; }; done
ulimit -n "$(ulimit -Hn)"; sysctl -qw net.core.rmem_max=8388608 net.core.wmem_max=8388608
w=$(mktemp -d); head -c $((30 * 96000)) /dev/urandom > $w/media
lscpu | grep "Model name"; nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null
taskset -c 0 $c/ncast-server --file $w/media --listen 127.0.0.1:0 --metrics 127.0.0.1:0 --bitrate 768k \
  --max-rate 1000G --max-sessions $((peers + 100)) --max-sessions-per-source 0 --stats-interval 0 ${NCAST_SERVER_ARGS:-} > $w/s.log 2> $w/s.err &
spid=$!
for _ in $(seq 1 100); do grep -q '"event":"listening"' $w/s.log && break; sleep 0.1; done
port=$(grep -o '"port":[0-9]*' $w/s.log | head -1 | cut -d: -f2)
metrics=$(grep -o '"metrics":"[0-9.:]*' $w/s.log | cut -d'"' -f4)
grep -o '"engine":"[^"]*' $w/s.log
# The swarm on the other CPUs, leaving CPU 1 idle where there are more than two.
first=$(( $(nproc) > 2 ? 2 : 1 ))
taskset -c $first-$(( $(nproc) - 1 )) $c/ncast-swarm -s 127.0.0.1:$port --stream media -n $peers --threads $(( $(nproc) - first )) \
  --ramp 2 --timeout 90 ${NCAST_SWARM_ARGS:-} --progress off --report $w/swarm.json > $w/swarm.txt 2> $w/swarm.err &
wpid=$!
sleep 8
m() { python3 -c "import urllib.request,sys; t=urllib.request.urlopen('http://$metrics/metrics').read().decode(); print(sum(float(l.split()[-1]) for l in t.splitlines() if l.startswith(sys.argv[1]+' ') or l.startswith(sys.argv[1]+'{')))" "$1"; }
p0=$(m ncast_sent_packets_total); s0=$(m ncast_sendmmsg_calls_total); r0=$(m ncast_received_packets_total); g0=$(m ncast_gso_sends_total); n0=$(m ncast_send_messages_total)
t0=$(awk '{print $14+$15}' /proc/$spid/stat); x0=$(awk '/ctxt_switches/{s+=$2} END{print s}' /proc/$spid/task/*/status)
sampled=$spid; [ "$target" = swarm ] && sampled=$wpid
$perf record -F 1999 -g -o $w/perf.data -p $sampled -- sleep 8 2> $w/perf.err
t1=$(awk '{print $14+$15}' /proc/$spid/stat); x1=$(awk '/ctxt_switches/{s+=$2} END{print s}' /proc/$spid/task/*/status)
p1=$(m ncast_sent_packets_total); s1=$(m ncast_sendmmsg_calls_total); r1=$(m ncast_received_packets_total); g1=$(m ncast_gso_sends_total); n1=$(m ncast_send_messages_total)
python3 -c "
tk=$(getconf CLK_TCK); cpu=($t1-$t0)/tk; pk=$p1-$p0
print(f'server CPU {cpu:.2f} s in ~8 s; datagrams sent {pk:.0f}; sendmmsg calls {$s1-$s0:.0f}; received {$r1-$r0:.0f}; {1e6*cpu/pk:.2f} us CPU per datagram sent')
print(f'GSO messages {$g1-$g0:.0f}: {100*($g1-$g0)/max(pk,1):.1f} per 100 datagrams; all messages {100*($n1-$n0)/max(pk,1):.1f} per 100 (0: a server without the counter)')
print(f'context switches {$x1-$x0}: {100*($x1-$x0)/max(pk,1):.1f} per 100 datagrams; datagrams received per 100 sent {100*($r1-$r0)/max(pk,1):.1f}')"
wait $wpid; echo "swarm exit $?"; tail -6 $w/swarm.txt; tail -3 $w/swarm.err
kill -TERM $spid; wait $spid
out=${OUT:-$w}
$perf report -i $w/perf.data --stdio --no-children --sort dso -g none 2>/dev/null | grep -v "^#" | grep -v "^$" | sed 's/  */ /g' | head -12
$perf report -i $w/perf.data --stdio --no-children --sort symbol -g none --percent-limit 0.3 2>/dev/null | grep -v "^#" | grep -v "^$" | sed 's/  */ /g; s/ - - *$//' > $out/symbols-$peers.txt
$perf report -i $w/perf.data --stdio --children --sort symbol -g none --percent-limit 2 2>/dev/null | grep -v "^#" | grep -v "^$" | sed 's/  */ /g; s/ - - *$//' > $out/children-$peers.txt
$perf report -i $w/perf.data --stdio --no-children --sort dso,symbol -g none --percent-limit 0.25 2>/dev/null | grep -v "^#" | grep -v "^$" | sed 's/  */ /g; s/ - - *$//' > $out/dso-symbols-$peers.txt
head -70 $out/dso-symbols-$peers.txt
cat $w/perf.err | tail -2
rm -rf $w
