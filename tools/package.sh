#!/usr/bin/env bash
# The Debian packages: libncast-rs0, libncast-rs-dev and ncast-tools, built in build-package/ (or
# $NCAST_PACKAGE_BUILD_DIR) and copied into DIR (default: packages/). Install them with
#   apt-get install ./packages/*.deb
# They carry the CPU backend: a CUDA build links cuRAND from the CUDA toolkit, which no Debian
# package provides, so GPU hosts build from source (README).
#   tools/package.sh [DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/packages}
build=${NCAST_PACKAGE_BUILD_DIR:-$root/build-package}
case $out in -*) echo "usage: tools/package.sh [DIR]" >&2; exit 2 ;; esac

"$root/tools/install-deps.sh"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr -DCMAKE_INSTALL_SYSCONFDIR=/etc \
  -DNCAST_ENABLE_CUDA=OFF -DNCAST_BUILD_TESTS=OFF -DNCAST_SANITIZE=OFF >/dev/null
cmake --build "$build" -j "$(nproc)"
rm -f "$build"/*.deb
(cd "$build" && cpack -G DEB >/dev/null)
mkdir -p "$out"
debs=("$build"/*.deb)
cp "${debs[@]}" "$out/"
for deb in "${debs[@]}"; do echo "package.sh: $out/$(basename "$deb")"; done
