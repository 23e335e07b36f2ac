#!/usr/bin/env bash
# Lays out every tracked C, C++ and CUDA source with .clang-format; --check changes nothing and fails,
# naming the files, where one is not laid out so (CI runs it that way).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
command -v clang-format >/dev/null || { echo "format.sh: clang-format not found (Debian package clang-format)" >&2; exit 1; }
mapfile -t files < <(git ls-files '*.c' '*.h' '*.cpp' '*.hpp' '*.cu' '*.cuh')
if [ "${1:-}" = --check ]; then
  bad=()
  for f in "${files[@]}"; do
    clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
  done
  if [ ${#bad[@]} -ne 0 ]; then
    printf 'format.sh: not laid out as .clang-format says (run tools/format.sh):\n' >&2
    printf '  %s\n' "${bad[@]}" >&2
    exit 1
  fi
  echo "format.sh: ${#files[@]} files laid out as .clang-format says"
elif [ $# -eq 0 ]; then
  clang-format -i "${files[@]}"
else
  echo "usage: tools/format.sh [--check]" >&2
  exit 2
fi
