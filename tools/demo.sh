#!/usr/bin/env bash
# The README's main job: installs what is missing, builds, and shows what ncast does on this machine.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${NCAST_BUILD_DIR:-$root/build}
export NCAST_QUIET_BUILD=1
"$root/tools/build.sh"
bench="$build/tools/bench/ncast-bench"
rlnc="$build/tools/ncast-rlnc/ncast-rlnc"
rs="$build/tools/ncast-rs/ncast-rs"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

section() { printf '\n== %s\n' "$*"; }

section "Streaming: a test video served over UDP on loopback to lossy peers, a relay and a player"
"$root/tools/stream-demo.sh"

section "Live: ffmpeg on air into ncast-server --live, a peer tuning in late at the live edge and playing into ffmpeg"
"$root/tools/live-demo.sh"

section "GF(2^8) engine: every SIMD level this CPU has, checked against ISA-L, then timed beside it (one core)"
"$bench" gf --cpu 0 --seconds 0.3 --kernel dot_multi

section "RLNC: a 20 MB file through two lossy hops and two recoding relays (20 % loss per hop), decoded and compared"
head -c 20000000 /dev/urandom >"$work/media.bin"
"$rlnc" roundtrip "$work/media.bin" --n 128 --symbol 1200 --loss 0.2 --relays 2 --seed 7

section "RLNC codec on one core, n=128, 4 KiB symbols, beside ISA-L doing the same products"
"$bench" rlnc --n 128 --symbol 4096 --cpu 0 --seconds 0.3

section "Reed-Solomon 10+4: encode a 200 MB file, lose 3 shards and corrupt a 4th, decode, repair"
head -c 200000000 /dev/urandom >"$work/data.bin"
"$rs" encode "$work/data.bin" -k 10 -m 4 -o "$work/shards"
rm "$work/shards/data.bin.000" "$work/shards/data.bin.003" "$work/shards/data.bin.012"
printf 'X' | dd of="$work/shards/data.bin.007" bs=1 seek=1000 conv=notrunc status=none
status=0
"$rs" verify "$work/shards/data.bin.manifest.json" || status=$?
[ "$status" -eq 3 ] || { echo "demo: expected verify to report damaged-but-decodable (exit 3), got $status" >&2; exit 1; }
"$rs" decode "$work/shards/data.bin.manifest.json" -o "$work/restored.bin"
cmp "$work/data.bin" "$work/restored.bin"
echo "restored byte for byte from 10 of 14 shards"
"$rs" repair "$work/shards/data.bin.manifest.json"
"$rs" verify "$work/shards/data.bin.manifest.json"

section "Reed-Solomon on one core, 1 MiB shards, beside ISA-L"
"$bench" rs --k 10 --m 4 --cpu 0 --seconds 0.3
"$bench" rs --k 32 --m 8 --cpu 0 --seconds 0.3

echo
echo "demo: all checks passed"
