#!/usr/bin/env bash
# The Debian packages: libncast-rs0, libncast-rs-dev and ncast-tools, built in build-package/ (or
# $NCAST_PACKAGE_BUILD_DIR, which may be the build folder of tools/test.sh: only the install prefix
# changes, nothing is compiled again) and copied into DIR (default: packages/). Install them with
#   apt-get install ./packages/*.deb
# Where nvcc is found they carry the CUDA backend too (programs and the RS library's module), which
# needs only the NVIDIA driver at run time and codes on the CPU where there is none.
#   tools/package.sh [DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/packages}
build=${NCAST_PACKAGE_BUILD_DIR:-$root/build-package}
case $out in -*) echo "usage: tools/package.sh [DIR]" >&2; exit 2 ;; esac

"$root/tools/install-deps.sh"
# A build folder of tools/test.sh gets its install locations back afterwards: left at /usr and /etc, a
# later `cmake --install --prefix DIR` of it (the install test does one) would write /etc/ncast.
cached() { sed -n "s|^$1:PATH=||p" "$build/CMakeCache.txt" 2>/dev/null || true; }
prefix=$(cached CMAKE_INSTALL_PREFIX)
sysconfdir=$(cached CMAKE_INSTALL_SYSCONFDIR)
restore() {
  local status=$?
  if [ -n "$prefix" ]; then
    cmake -S "$root" -B "$build" -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_INSTALL_SYSCONFDIR="${sysconfdir:-etc}" \
      >/dev/null || status=1
  fi
  exit "$status"
}
trap restore EXIT
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr -DCMAKE_INSTALL_SYSCONFDIR=/etc \
  -DNCAST_SANITIZE=OFF >/dev/null
cmake --build "$build" -j "$(nproc)" --target ncast_packaged
rm -f "$build"/*.deb
(cd "$build" && cpack -G DEB >/dev/null)
mkdir -p "$out"
debs=("$build"/*.deb)
cp "${debs[@]}" "$out/"
for deb in "${debs[@]}"; do echo "package.sh: $out/$(basename "$deb")"; done
