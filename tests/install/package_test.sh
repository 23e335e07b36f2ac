#!/usr/bin/env bash
# The Debian packages as a user meets them, on this machine (it needs root: CI runs so): installed with
# apt-get, which pulls their declared dependencies, each with its Apache-2.0 copyright file;
# docs/examples/rs_example.c and .cpp built outside the tree through pkg-config and through
# find_package(ncast) and run on the installed .so; the ISA-L interop check against the installed
# library; the library's exports and its independence of CUDA; the man pages; ncast-server started
# from its systemd unit with the example configuration (by systemd when it runs, else the unit's own
# command line) and a file fetched from it byte-exact by ncast-peer; then apt-get purge, after which
# nothing the packages installed is left.
#   package_test.sh DIR_OF_DEBS SOURCE_DIR
set -euo pipefail
debs=$(cd "$1" && pwd)
source=$(cd "$2" && pwd)
packages=(libncast-rs0 libncast-rs-dev ncast-tools)
media=/srv/ncast/demo

fail() {
  echo "package_test: $*" >&2
  exit 1
}
command -v systemd-analyze >/dev/null || fail "needs systemd-analyze (Debian package systemd) to check the unit"
[ "$(id -u)" -eq 0 ] || fail "needs root: it installs the packages on this machine and removes them"
for p in "${packages[@]}"; do
  ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
    fail "$p is installed already; this test would remove it"
done
[ ! -e "$media" ] || fail "$media exists; the test serves its own file there and would not touch yours"
[ ! -e /etc/ncast ] || fail "/etc/ncast exists; the test would not touch your configuration"

tmp=$(mktemp -d)
server=
systemd=false
[ -d /run/systemd/system ] && systemd=true
cleanup() {
  local status=$?
  set +e
  [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
  $systemd && systemctl stop ncast-server@demo 2>/dev/null
  rm -rf "$media"
  rmdir /srv/ncast 2>/dev/null
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' && apt-get purge -y -qq "$p" >/dev/null 2>&1
  done
  rm -rf "$tmp"
  exit "$status"
}
trap cleanup EXIT
trap "exit 130" INT TERM HUP PIPE
quiet() { # runs a command, showing its output only when it fails
  "$@" >"$tmp/log" 2>&1 || { cat "$tmp/log" >&2; fail "failed: $*"; }
}

export DEBIAN_FRONTEND=noninteractive
quiet apt-get install -y -q "$debs"/libncast-rs0_*.deb "$debs"/libncast-rs-dev_*.deb "$debs"/ncast-tools_*.deb
for p in "${packages[@]}"; do dpkg -L "$p"; done | sort -u >"$tmp/installed"
for p in "${packages[@]}"; do
  grep -qx 'License: Apache-2.0' "/usr/share/doc/$p/copyright" 2>/dev/null || fail "$p has no Apache-2.0 copyright file"
done

# The library: found through its SONAME by the loader, exporting only the C API, needing no CUDA.
so=$(ldconfig -p | awk '/libncast_rs\.so\.0 / && !found++ { print $NF }')
[ -n "$so" ] || fail "the loader does not know libncast_rs.so.0"
quiet "$source/tests/install/exports_test.sh" "$so" "$source/coding/rs/ncast_rs.h"
! ldd "$so" | grep -E 'libcuda|libcudart|libcurand' || fail "$so links CUDA libraries"

# The user's programs, outside the tree, each checked to run on the installed library.
mkdir "$tmp/src" "$tmp/pkg-config"
cp "$source/docs/examples/rs_example.c" "$source/docs/examples/rs_example.cpp" \
  "$source/tests/install/installed_isal_interop.c" "$tmp/src/"
runs_on_installed() {
  local program=$1 libs
  libs=$(ldd "$program")
  grep -q "libncast_rs.so.0 => .*libncast_rs.so.0 " <<<"$libs" || fail "$program does not load libncast_rs.so.0"
  [ "$(readlink -f "$(awk '/libncast_rs.so.0/ { print $3 }' <<<"$libs")")" = "$(readlink -f "$so")" ] ||
    fail "$program loads another libncast_rs.so.0 than the installed one"
  "$program" >"$tmp/out" 2>&1 || fail "$program failed: $(cat "$tmp/out")"
}
read -r -a flags <<<"$(pkg-config --cflags --libs ncast-rs)"
quiet cc -std=c99 -Wall -Wextra -pedantic -Werror "$tmp/src/rs_example.c" "${flags[@]}" -o "$tmp/pkg-config/rs_example_c"
runs_on_installed "$tmp/pkg-config/rs_example_c"
quiet c++ -std=c++17 -Wall -Wextra -pedantic -Werror "$tmp/src/rs_example.cpp" "${flags[@]}" \
  -o "$tmp/pkg-config/rs_example_cpp"
runs_on_installed "$tmp/pkg-config/rs_example_cpp"
read -r -a flags <<<"$(pkg-config --cflags --libs ncast-rs libisal)"
quiet cc -std=c99 -Wall -Wextra -pedantic -Werror "$tmp/src/installed_isal_interop.c" "${flags[@]}" \
  -o "$tmp/pkg-config/installed_isal_interop"
runs_on_installed "$tmp/pkg-config/installed_isal_interop"
cat >"$tmp/src/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(ncast_user C CXX)
set(CMAKE_CXX_STANDARD 17)
find_package(ncast REQUIRED)
add_executable(rs_example_c rs_example.c)
target_link_libraries(rs_example_c PRIVATE ncast::rs)
add_executable(rs_example_cpp rs_example.cpp)
target_link_libraries(rs_example_cpp PRIVATE ncast::rs)
CMAKE
quiet cmake -S "$tmp/src" -B "$tmp/cmake" -DCMAKE_BUILD_TYPE=Release
quiet cmake --build "$tmp/cmake"
runs_on_installed "$tmp/cmake/rs_example_c"
runs_on_installed "$tmp/cmake/rs_example_cpp"

# Where the packages carry the CUDA backend, the installed library asks its module for the CUDA engine:
# it gets it, or the module's own answer that there is no device.
if grep -q '/ncast/libncast_rs_cuda\.so$' "$tmp/installed"; then
  cat >"$tmp/src/cuda_backend.c" <<'C'
#include <ncast/ncast_rs.h>
#include <stdio.h>
int main(void) {
  ncast_rs_options options;
  ncast_rs* codec = NULL;
  ncast_rs_options_init(&options);
  options.backend = NCAST_RS_BACKEND_CUDA;
  if (ncast_rs_create(&codec, 4, 2, &options) != NCAST_RS_OK) {
    printf("%s\n", ncast_rs_last_error());
    return 1;
  }
  printf("%s\n", ncast_rs_backend_description(codec));
  ncast_rs_destroy(codec);
  return 0;
}
C
  read -r -a flags <<<"$(pkg-config --cflags --libs ncast-rs)"
  quiet cc -std=c99 -Wall -Wextra -pedantic -Werror "$tmp/src/cuda_backend.c" "${flags[@]}" -o "$tmp/cuda_backend"
  answer=$("$tmp/cuda_backend" || true)
  [[ $answer == cuda* || $answer == *"no usable CUDA device"* ]] ||
    fail "the installed library did not get its CUDA module: $answer"
fi

# A man page for every program, rendered by man itself.
for program in ncast-server ncast-peer ncast-swarm ncast-rs ncast-rlnc ncast-bench; do
  command -v "$program" >/dev/null || fail "$program is not on PATH"
  MANPAGER=cat MANWIDTH=100 man "$program" >"$tmp/man" 2>"$tmp/man.err" || fail "man $program: $(cat "$tmp/man.err")"
  grep -q -- "--help" "$tmp/man" || fail "man $program does not list its options"
  [ -f "/usr/share/bash-completion/completions/$program" ] || fail "no bash completion for $program"
done

# The service: ncast-server@demo with the example configuration, serving a file of its media folder.
unit=$(dpkg -L ncast-tools | grep '/ncast-server@\.service$')
verdict=$(systemd-analyze verify ncast-server@demo.service 2>&1 | grep ncast-server || true)
[ -z "$verdict" ] || fail "systemd-analyze verify: $verdict"
# Its sandbox, as systemd rates it: 1.2 of 10 when written, failing above 1.5.
systemd-analyze security --offline=true --threshold=15 "$unit" >"$tmp/log" 2>&1 ||
  fail "the unit's sandbox rates worse than 1.5: $(tail -n 1 "$tmp/log")"
mkdir -p "$media"
head -c 3000000 /dev/urandom >"$media/clip.bin"
chmod -R a+rX /srv/ncast
if $systemd; then
  quiet systemctl start ncast-server@demo
else
  # The unit's ExecStart, with what systemd would put for %i and $STATE_DIRECTORY.
  mkdir -m 0700 "$tmp/state"
  command=$(sed -n 's/^ExecStart=//p' "$unit" | sed "s|%i|demo|g; s|\${STATE_DIRECTORY}|$tmp/state|g")
  read -r -a argv <<<"$command"
  "${argv[@]}" >"$tmp/server.out" 2>&1 &
  server=$!
fi
address=$(sed -n 's/^listen *= *//p' /etc/ncast/demo.conf)
for _ in $(seq 100); do
  grep -q '"event":"listening"' "$tmp/server.out" 2>/dev/null && break
  $systemd && journalctl -u ncast-server@demo -o cat 2>/dev/null | grep -q '"event":"listening"' && break
  sleep 0.1
done
$systemd && journalctl -u ncast-server@demo -o cat >"$tmp/server.out"
key=$(grep -m1 -o '"identity":"[0-9a-f]*"' "$tmp/server.out" | cut -d'"' -f4 || true)
[ -n "$key" ] || fail "ncast-server@demo did not start: $(cat "$tmp/server.out")"
timeout 60 ncast-peer --server "$address" --server-key "$key" --stream clip.bin -o "$tmp/fetched" --progress off \
  2>"$tmp/peer.err" || fail "ncast-peer failed: $(tail -n 5 "$tmp/peer.err")"
cmp -s "$media/clip.bin" "$tmp/fetched" || fail "the fetched file differs from the served one"
if $systemd; then
  quiet systemctl stop ncast-server@demo
else
  kill "$server"
  wait "$server" 2>/dev/null || true
  server=
  [ -s "$tmp/state/identity.pem" ] || fail "the server kept no identity key in its state directory"
fi

# Purged, the packages leave nothing behind: no file, no folder of their own (folders they share with
# other packages, /usr/bin say, stay).
quiet apt-get purge -y -q "${packages[@]}"
while read -r path; do
  if [ -d "$path" ]; then [[ $path != *ncast* ]] || fail "$path is left after purge"
  else [ ! -e "$path" ] || fail "$path is left after purge"; fi
done <"$tmp/installed"
echo "package_test: installed ${packages[*]}, built and ran the examples, served and fetched a file, purged"
