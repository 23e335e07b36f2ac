#!/usr/bin/env bash
# Installs every package ncast needs, by Debian name. Idempotent: with everything present it only checks.
# --checks adds what CI's layout and static-analysis checks run (tools/format.sh, tools/tidy.sh).
set -euo pipefail

packages=(
  build-essential cmake pkg-config git
  libboost-dev libboost-program-options-dev
  libgtest-dev googletest
  libisal-dev
  libssl-dev
  nlohmann-json3-dev
  ffmpeg
  gnuplot-nox
  dpkg-dev file man-db
  iproute2 nftables iperf3 jq
)
case "${1:-}" in
  --checks) packages+=(clang-format clang-tidy) ;;
  "") ;;
  *) echo "usage: tools/install-deps.sh [--checks]" >&2; exit 2 ;;
esac

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}"
sudo=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
