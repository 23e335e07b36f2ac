#!/usr/bin/env bash
# `cmake --install` into a scratch prefix, then docs/examples/rs_example.c, docs/examples/rs_example.cpp
# (the header-only C++ API, as C++17) and a C++ user of the C header built outside the tree, once
# through find_package(ncast) and once through pkg-config, run on the installed shared library (ldd
# says so); the static archive, through ncast::rs_static and through pkg-config --static, runs on no
# shared ncast. Through pkg-config, a C program also checks that the
# installed library's parity is ISA-L's.
#   install_test.sh BUILD_DIR SOURCE_DIR CMAKE CC CXX [FLAGS]
# FLAGS (one word) go to every compile and link of the user's programs: the sanitizer of a sanitized build.
set -euo pipefail
build=$1
source=$2
cmake=$3
cc=$4
cxx=$5
user_flags=(${6:+"$6"})

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
  echo "install_test: $*" >&2
  exit 1
}
quiet() { # runs a command, showing its output only when it fails
  "$@" >"$tmp/log" 2>&1 || { cat "$tmp/log" >&2; fail "failed: $*"; }
}

# An absolute install folder (the Debian packages' /etc) ignores --prefix: installing would write there.
# (OLDINCLUDEDIR is always /usr/include and installs nothing here.)
absolute=$(grep -E '^CMAKE_INSTALL_[A-Z]+DIR:PATH=/' "$build/CMakeCache.txt" | grep -v '^CMAKE_INSTALL_OLDINCLUDEDIR:' || true)
[ -z "$absolute" ] || fail "$build installs outside any prefix (${absolute%%$'\n'*}); configure it again with a relative folder"
prefix=$tmp/prefix
quiet "$cmake" --install "$build" --prefix "$prefix"
pc=$(find "$prefix" -name ncast-rs.pc)
[ -n "$pc" ] || fail "no ncast-rs.pc under $prefix"
libdir=$(dirname "$(dirname "$pc")")
[ -f "$prefix/include/ncast/ncast_rs.h" ] || fail "no include/ncast/ncast_rs.h"
[ -f "$prefix/include/ncast/ncast_rs.hpp" ] || fail "no include/ncast/ncast_rs.hpp"
[ -f "$libdir/libncast_rs.a" ] || fail "no libncast_rs.a in $libdir"
[ -f "$libdir/cmake/ncast/ncastConfig.cmake" ] && [ -f "$libdir/cmake/ncast/ncastConfigVersion.cmake" ] ||
  fail "no CMake package in $libdir/cmake/ncast"

export PKG_CONFIG_PATH=$libdir/pkgconfig
version=$(pkg-config --modversion ncast-rs)
soname=libncast_rs.so.${version%%.*}
[ -L "$libdir/libncast_rs.so" ] || fail "no namelink libncast_rs.so"
readelf -d "$libdir/libncast_rs.so" | grep -q "SONAME.*\[$soname\]" || fail "SONAME is not $soname"
# The library a CPU-only user loads needs no CUDA library; the CUDA module, where built, only the driver.
needed=$(readelf -d "$libdir/libncast_rs.so")
! grep -iE 'NEEDED.*(cuda|curand)' <<<"$needed" || fail "libncast_rs.so needs CUDA libraries"
module=$libdir/ncast/libncast_rs_cuda.so
if [ -f "$module" ]; then
  needed=$(readelf -d "$module")
  ! grep -iE 'NEEDED.*(cudart|curand)' <<<"$needed" || fail "the CUDA module needs the toolkit's libraries"
fi

# Runs a program built against the installed library, checking that it loads the installed .so
# (shared=yes) or none (shared=no) and that it reports the package's version where it prints one.
check_program() {
  local program=$1 shared=$2
  local libs
  libs=$(ldd "$program")
  if [ "$shared" = yes ]; then
    grep -q "$soname => $libdir/$soname " <<<"$libs" || fail "$program does not load $libdir/$soname:
$libs"
  elif grep -q libncast_rs <<<"$libs"; then
    fail "$program loads a shared ncast: $libs"
  fi
  "$program" >"$tmp/out" 2>&1 || fail "$program failed: $(cat "$tmp/out")"
  case $program in
    *consumer*) [ "$(tail -n 1 "$tmp/out")" = "$version" ] || fail "$program reports $(tail -n 1 "$tmp/out"), not $version" ;;
  esac
}

# The user's sources, outside the tree.
mkdir "$tmp/src"
cp "$source/docs/examples/rs_example.c" "$source/docs/examples/rs_example.cpp" \
  "$source/tests/install/installed_consumer.cpp" "$source/tests/install/installed_isal_interop.c" "$tmp/src/"
cat >"$tmp/src/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(ncast_user C CXX)
find_package(ncast REQUIRED)
add_executable(rs_example_c rs_example.c)
target_link_libraries(rs_example_c PRIVATE ncast::rs)
add_executable(rs_example_c_static rs_example.c)
target_link_libraries(rs_example_c_static PRIVATE ncast::rs_static)
add_executable(installed_consumer installed_consumer.cpp)
target_link_libraries(installed_consumer PRIVATE ncast::rs)
# The C++ API promises C++17: the oldest standard it is built with here.
foreach(library rs rs_static)
  add_executable(rs_example_cpp_${library} rs_example.cpp)
  target_link_libraries(rs_example_cpp_${library} PRIVATE ncast::${library})
  target_compile_options(rs_example_cpp_${library} PRIVATE -Wall -Wextra -pedantic -Werror)
  set_target_properties(rs_example_cpp_${library} PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON
                                                             CXX_EXTENSIONS OFF)
endforeach()
CMAKE
quiet "$cmake" -S "$tmp/src" -B "$tmp/with-cmake" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc" \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS="${6:-}" -DCMAKE_CXX_FLAGS="${6:-}"
grep -q "^ncast_DIR:PATH=$libdir/cmake/ncast$" "$tmp/with-cmake/CMakeCache.txt" ||
  fail "find_package(ncast) did not find the installed package"
quiet "$cmake" --build "$tmp/with-cmake"
check_program "$tmp/with-cmake/rs_example_c" yes
check_program "$tmp/with-cmake/rs_example_c_static" no
check_program "$tmp/with-cmake/installed_consumer" yes
check_program "$tmp/with-cmake/rs_example_cpp_rs" yes
check_program "$tmp/with-cmake/rs_example_cpp_rs_static" no

# pkg-config gives no run path: the loader finds the library as it would under a system prefix.
mkdir "$tmp/with-pkg-config"
read -r -a flags <<<"$(pkg-config --cflags --libs ncast-rs)"
quiet "$cc" -std=c99 -Wall -Wextra -pedantic -Werror "${user_flags[@]}" "$tmp/src/rs_example.c" "${flags[@]}" \
  -o "$tmp/with-pkg-config/rs_example_c"
quiet "$cxx" -Wall -Wextra -pedantic -Werror "${user_flags[@]}" "$tmp/src/installed_consumer.cpp" "${flags[@]}" \
  -o "$tmp/with-pkg-config/installed_consumer"
quiet "$cxx" -std=c++17 -Wall -Wextra -pedantic -Werror "${user_flags[@]}" "$tmp/src/rs_example.cpp" "${flags[@]}" \
  -o "$tmp/with-pkg-config/rs_example_cpp"
# The interop check of the tests, against the installed library: parity equal to ISA-L's.
read -r -a isal_flags <<<"$(pkg-config --cflags --libs ncast-rs libisal)"
quiet "$cc" -std=c99 -Wall -Wextra -pedantic -Werror "${user_flags[@]}" "$tmp/src/installed_isal_interop.c" \
  "${isal_flags[@]}" -o "$tmp/with-pkg-config/installed_isal_interop"

# The static archive with --static's private libraries, found first in a folder that holds only it.
mkdir "$tmp/static-only"
cp "$libdir/libncast_rs.a" "$tmp/static-only/"
read -r -a static_flags <<<"$(pkg-config --static --cflags --libs ncast-rs)"
quiet "$cc" -std=c99 "${user_flags[@]}" "$tmp/src/rs_example.c" -L"$tmp/static-only" "${static_flags[@]}" \
  -o "$tmp/with-pkg-config/rs_example_c_static"
quiet "$cxx" -std=c++17 "${user_flags[@]}" "$tmp/src/rs_example.cpp" -L"$tmp/static-only" "${static_flags[@]}" \
  -o "$tmp/with-pkg-config/rs_example_cpp_static"
export LD_LIBRARY_PATH=$libdir
check_program "$tmp/with-pkg-config/rs_example_c" yes
check_program "$tmp/with-pkg-config/installed_consumer" yes
check_program "$tmp/with-pkg-config/rs_example_cpp" yes
check_program "$tmp/with-pkg-config/installed_isal_interop" yes
check_program "$tmp/with-pkg-config/rs_example_c_static" no
check_program "$tmp/with-pkg-config/rs_example_cpp_static" no
echo "install_test: ncast-rs $version installed, found by find_package and pkg-config, run from $libdir"
